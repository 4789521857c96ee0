"""`Record` (hosts/record.py) behaves as `@dataclass(frozen=True)` for the classes hosts use.

Generated field lists (required, then with defaults) and generated calls: both give the same
values, repr, equality, hash and `__match_args__`, or the same TypeError with the same message;
assignment and deletion are refused alike. The toolkit's classes are Records and import no
dataclasses.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopx_core.hosts import model
from loopx_core.hosts.record import Record
from tests.probe import NO_COVERAGE

NAMES = ["a", "b", "c", "d", "e"]


@st.composite
def classes(draw: st.DrawFn) -> tuple[type, type, list[str]]:
    """A dataclass and a Record with the same fields: some required, then some with defaults."""
    names = draw(st.lists(st.sampled_from(NAMES), unique=True, max_size=5))
    required = draw(st.integers(0, len(names)))
    defaults = {name: draw(st.sampled_from([0, "", None, (), "x"])) for name in names[required:]}
    specs = [
        (n, "object", dataclasses.field(default=defaults[n])) if n in defaults else (n, "object")
        for n in names
    ]
    frozen = dataclasses.make_dataclass("Value", specs, frozen=True)
    record = type("Value", (Record,), {"__annotations__": dict.fromkeys(names, "object"), **defaults})
    return frozen, record, names


@st.composite
def calls(draw: st.DrawFn) -> tuple[list[object], dict[str, object]]:
    """Positional values and keywords, the keywords maybe unknown or repeating a positional one."""
    args = draw(st.lists(st.integers(0, 3), max_size=6))
    keys = draw(st.lists(st.sampled_from([*NAMES, "zz"]), unique=True, max_size=4))
    return list(args), {k: draw(st.integers(0, 3)) for k in keys}


def _outcome(cls: type, args: list[object], kwargs: dict[str, object]) -> tuple[Any, ...]:
    try:
        value = cls(*args, **kwargs)
    except TypeError as error:
        return ("TypeError", str(error))
    return ("ok", repr(value), hash(value), cls.__match_args__, value == cls(*args, **kwargs))


@settings(max_examples=400, deadline=None)
@given(classes(), calls())
def test_a_record_is_built_as_a_frozen_dataclass(pair: tuple[type, type, list[str]], call: Any) -> None:
    frozen, record, _ = pair
    args, kwargs = call
    assert _outcome(record, args, kwargs) == _outcome(frozen, args, kwargs)


@settings(max_examples=100, deadline=None)
@given(classes(), st.sampled_from([*NAMES, "zz"]))
def test_a_record_refuses_assignment_as_a_frozen_dataclass(
    pair: tuple[type, type, list[str]], name: str
) -> None:
    frozen, record, names = pair
    values = dict.fromkeys(names, 1)
    for cls in (frozen, record):
        value = cls(**values)
        with pytest.raises(AttributeError) as assigned:
            setattr(value, name, 2)
        with pytest.raises(AttributeError) as deleted:
            delattr(value, name)
        assert (str(assigned.value), str(deleted.value)) == (
            f"cannot assign to field {name!r}",
            f"cannot delete field {name!r}",
        )


def test_records_of_two_classes_differ() -> None:
    assert model.Finding("p", "x") != model.HostSteps() and model.Finding("p", "x") == model.Finding("p", "x")
    assert model.HookAnswer() != (("",), 0, "")


def test_the_toolkit_values_are_records() -> None:
    values = [getattr(model, name) for name in dir(model)]
    records = [v for v in values if isinstance(v, type) and issubclass(v, Record) and v is not Record]
    assert {r.__name__ for r in records} == {
        *("Base", "RenderContext", "FacadeFile", "Finding"),
        *("HostSteps", "HostListing", "HookCall", "HookAnswer"),
    }
    assert model.RenderContext.__match_args__[:2] == ("host", "scope")
    assert model.FacadeFile("p", "c").key == "target/p" and model.Base("x", ("X",)).shown == "$X"


def test_the_toolkit_imports_no_dataclasses() -> None:
    code = "import sys, json, loopx_core.hosts.model\nprint(json.dumps('dataclasses' in sys.modules))"
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")} | NO_COVERAGE
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True, env=env)
    assert json.loads(ran.stdout) is False  # coverage (make test) would load dataclasses itself


def _child(record: bool) -> type:
    """`Child(Parent)` with fields x, y=2 then z=3: Records, or frozen dataclasses (same qualnames)."""
    if record:

        class Parent(Record):
            x: int
            y: int = 2

        class Child(Parent):
            z: int = 3

        return Child

    @dataclasses.dataclass(frozen=True)
    class Parent:  # type: ignore[no-redef]
        x: int
        y: int = 2

    @dataclasses.dataclass(frozen=True)
    class Child(Parent):  # type: ignore[no-redef]
        z: int = 3

    return Child


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [((1,), {}), ((1, 5, 6), {}), ((), {"z": 9, "x": 0}), ((1, 2, 3, 4), {}), ((), {"z": 1})],
)
def test_a_subclass_adds_its_fields_after_its_parents(
    args: tuple[int, ...], kwargs: dict[str, object]
) -> None:
    """As a frozen dataclass subclass: the parent's fields first, then its own (defaults kept)."""
    assert _outcome(_child(True), list(args), kwargs) == _outcome(_child(False), list(args), kwargs)


@pytest.mark.parametrize("default", [[], {}, set(), bytearray(), [1]])
def test_an_unhashable_default_is_refused_as_a_dataclass_refuses_it(default: object) -> None:
    """A list default would be one list shared by every instance: refused when the class is made."""
    with pytest.raises(ValueError) as frozen:
        dataclasses.make_dataclass(
            "Value", [("a", "object", dataclasses.field(default=default))], frozen=True
        )
    with pytest.raises(ValueError) as record:
        type("Value", (Record,), {"__annotations__": {"a": "object"}, "a": default})
    assert str(record.value) == str(frozen.value)
