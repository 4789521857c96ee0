"""The generated lean checks of the input domain (`lean.DOMAINS`) against pydantic's.

Property: for every alias of loopx_core/models/domain.py and any value an op may be handed
(ints, floats, bools, strings, None, inf and nan, the bounds and their neighbours, datetimes
in any offset, naive or near the range's ends), the lean check either gives exactly the value
`TypeAdapter(alias).validate_python` gives (same type, same value, the same object for a time)
or raises `Doubt`; and it never doubts a canonical value pydantic accepts (an in-range float
or int, an id, an aware time), so the ops' checks import no pydantic in the common case.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, get_args, get_origin

import pytest
from annotated_types import Ge, Gt, Le, Lt
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from loopx_core.models import domain, lean
from tests.lean_documents import typed
from tests.model_values import OFFSETS, TEXT

ALIASES = {
    name: alias
    for name, alias in vars(domain).items()
    if get_origin(alias) is Annotated and get_origin(get_args(alias)[0]) is None
}
"""Every input domain alias (a free JSON object is none)."""


def bounds(alias: Any) -> list[float]:
    """The alias's numeric bounds."""
    found: list[float] = []
    for item in get_args(alias)[1:]:
        for bound in getattr(item, "metadata", [item]):
            for kind in (Ge, Gt, Le, Lt):
                if isinstance(bound, kind):
                    found.append(getattr(bound, kind.__name__.lower()))
    return found


def near(value: float) -> list[Any]:
    """`value`, its float neighbours, and its int neighbours."""
    out: list[Any] = [value, math.nextafter(value, math.inf), math.nextafter(value, -math.inf)]
    if float(value).is_integer():
        out += [int(value), int(value) + 1, int(value) - 1]
    return out


EDGES = [b for alias in ALIASES.values() for bound in bounds(alias) for b in near(bound)]
INPUTS = st.one_of(
    st.integers(),
    st.integers(-(2**60), 2**60),
    st.floats(),
    st.floats(-2e6, 2e6),
    st.booleans(),
    st.none(),
    st.sampled_from([*EDGES, math.inf, -math.inf, math.nan, -0.0, 2**53, 2**53 + 1, -(2**53) - 1]),
    st.sampled_from(["1", "1.5", "inf", "0", "abc", " 2", "g", "goal-1", "a..b", "-x", "x" * 64, "x" * 65]),
    TEXT,
    st.from_regex(domain.ID_PATTERN, fullmatch=True),
    st.datetimes(timezones=st.none() | OFFSETS),
    st.datetimes(datetime(1969, 12, 30), datetime(1970, 1, 2), timezones=OFFSETS),
    st.datetimes(datetime(2999, 12, 30), datetime(3000, 1, 2), timezones=OFFSETS),
    st.datetimes(datetime(3099, 12, 30), datetime(3100, 1, 2), timezones=OFFSETS),
    st.sampled_from(["2026-11-29T12:00:00Z", b"1", [1], {"a": 1}]),
)


def pydantic_check(alias: Any, value: Any) -> tuple[Any, ...]:
    try:
        return ("ok", TypeAdapter(alias).validate_python(value))
    except ValidationError:
        return ("refused",)


@settings(max_examples=4000, deadline=None)
@given(st.sampled_from(sorted(ALIASES)), INPUTS)
def test_lean_domain_checks_give_pydantics_value_or_doubt(name: str, value: Any) -> None:
    expected = pydantic_check(ALIASES[name], value)
    try:
        got = lean.DOMAINS[name](value)
    except lean.Doubt:
        assert not _canonical(name, value) or expected[0] == "refused", (name, value, expected)
        return
    assert expected[0] == "ok", (name, value)
    assert typed(got) == typed(expected[1]) and type(got) is type(expected[1])
    if isinstance(value, datetime):
        assert got is expected[1]  # the same object, its zone kept (pydantic returns it as given)


def _canonical(name: str, value: Any) -> bool:
    """What an op normally passes for the domain: its own type (an int for a float, exactly; no
    bool, no str for a number), an aware datetime for a time."""
    base = get_args(ALIASES[name])[0]
    if base is float:
        return type(value) is float or (type(value) is int and abs(value) <= 2**53)
    if base is int:
        return type(value) is int
    if base is str:
        return type(value) is str
    return type(value) is datetime and value.utcoffset() is not None


def test_every_domain_has_a_lean_check() -> None:
    """`DOMAINS` covers every alias ops pass to `domain.check` (the generator walks the module)."""
    assert set(lean.DOMAINS) == set(ALIASES)
    assert {"Minutes", "MinutesOrZero", "Slots", "Priority", "NoProgressLimit", "Compute"} <= set(ALIASES)
    assert {"WindowHours", "SlotMinutes", "Seconds", "InputTime", "Id", "Time"} <= set(ALIASES)


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("Minutes", 30, 30.0),
        ("Minutes", 0.5, 0.5),
        ("MinutesOrZero", 0, 0.0),
        ("Slots", 1, 1),
        ("Priority", 9, 9),
        ("Compute", 1, 1.0),
        ("Id", "goal-1", "goal-1"),
        ("InputTime", datetime(2999, 12, 31, 23, 59, tzinfo=UTC), datetime(2999, 12, 31, 23, 59, tzinfo=UTC)),
    ],
)
def test_lean_domain_checks_decide_the_common_values_alone(name: str, value: Any, expected: Any) -> None:
    got = lean.DOMAINS[name](value)
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("Minutes", 0),
        ("Minutes", math.nan),
        ("Minutes", "5"),
        ("Minutes", True),
        ("Slots", 0),
        ("Slots", 2.0),
        ("Priority", 10),
        ("Id", "a..b"),
        ("InputTime", datetime(3000, 1, 1, tzinfo=UTC)),
        ("InputTime", datetime(2026, 1, 1)),
        ("InputTime", datetime(1970, 1, 1, tzinfo=UTC) - timedelta(microseconds=1)),
    ],
)
def test_lean_domain_checks_doubt_the_rest(name: str, value: Any) -> None:
    with pytest.raises(lean.Doubt):
        lean.DOMAINS[name](value)
