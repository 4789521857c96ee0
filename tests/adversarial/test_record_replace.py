"""`Record._replace` behaves as a NamedTuple's for the tick's values (Inputs, Decision, ...).

The decision's records were `typing.NamedTuple`s (the import of typing and ~0.2 ms a class on
every tick); as `Record`s they keep `_replace`: the same values afterwards (the original
untouched), the same ValueError for an unknown field, and a result still frozen.
"""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loopx_core.decide.assess import Assessment, Inputs
from loopx_core.decide.layers import Decision
from loopx_core.kernel.plan import SettlementPlan, SettlementStep
from loopx_core.models.record import Record
from loopx_core.quota import QuotaUsage
from loopx_core.store.choice import StoreChoice

NAMES = ["a", "b", "c", "d"]


@st.composite
def pairs(draw: st.DrawFn) -> tuple[Any, Any, list[str]]:
    """A NamedTuple and a Record value with the same fields and values."""
    names = draw(st.lists(st.sampled_from(NAMES), unique=True, min_size=1, max_size=4))
    values = [draw(st.integers(0, 3)) for _ in names]
    record = type("Value", (Record,), {"__annotations__": dict.fromkeys(names, "object")})
    return namedtuple("Value", names)(*values), record(*values), names


def _outcome(value: Any, names: list[str], changes: dict[str, object]) -> tuple[object, ...]:
    try:
        out = value._replace(**changes)
    except ValueError as error:
        return ("ValueError", str(error))
    return ("ok", tuple(getattr(out, n) for n in names), tuple(getattr(value, n) for n in names))


@given(pairs(), st.dictionaries(st.sampled_from([*NAMES, "zz", "yy"]), st.integers(0, 3), max_size=4))
def test_replace_gives_what_a_namedtuple_gives(
    pair: tuple[Any, Any, list[str]], changes: dict[str, int]
) -> None:
    tupled, record, names = pair
    assert _outcome(record, names, changes) == _outcome(tupled, names, changes)


@given(pairs(), st.integers(0, 3))
def test_a_replaced_record_is_still_frozen_and_equal_by_value(
    pair: tuple[Any, Any, list[str]], n: int
) -> None:
    _, record, names = pair
    out = record._replace(**{names[0]: n})
    with pytest.raises(AttributeError):
        out.__setattr__(names[0], n + 1)
    assert out == type(record)(*[n, *(getattr(record, m) for m in names[1:])])
    assert hash(out) == hash(type(record)(*(getattr(out, m) for m in names)))


@pytest.mark.parametrize(
    "cls", [Inputs, Assessment, Decision, QuotaUsage, SettlementStep, SettlementPlan, StoreChoice]
)
def test_the_tick_values_are_records(cls: type) -> None:
    """No NamedTuple (typing) nor dataclass (dataclasses) on the tick's path: each is a Record."""
    assert issubclass(cls, Record) and not issubclass(cls, tuple)
    assert "__dataclass_fields__" not in vars(cls)
