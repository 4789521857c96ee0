"""The generated lean constructors and writers against pydantic, on generated models.

Property: for any valid instance of any stored model (tests/model_values.py), its lean twin's
`dumps`, `dump_line`, `dump_compact` and `to_json` give exactly the bytes (the data) pydantic's
`model_dump_json(indent=2)`, `model_dump_json(exclude_none=True)`, `model_dump_json()` and
`model_dump(mode="json")` give, or `Doubt` exactly where pydantic refuses (a lone surrogate in
JSON text); the same after the models' own methods mutate both alike. A lean constructor
fills the defaults pydantic's does, fresh per object, and copies what it is given as pydantic does.
"""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, TypeAdapter
from pydantic_core import PydanticSerializationError

from loopx_core.errors import LoopxError
from loopx_core.models import lean, lean_writer
from loopx_core.models.goal import GoalState
from loopx_core.models.journal import PhaseRecord, TurnJournal
from loopx_core.store import lean as lean_store
from loopx_core.store.lean import from_model
from tests.builders import demo_project
from tests.conftest import REPO
from tests.lean_documents import documents, typed
from tests.model_values import JSON, MODELS, OFFSETS, TEXT, TIMES, any_instance, instances
from tests.probe import probe

SLOW = settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)


def outcome(write: Any) -> tuple[str, Any]:
    """("ok", what `write` gives) or ("doubt",) when the writer refuses the value."""
    try:
        return ("ok", write())
    except (lean.Doubt, PydanticSerializationError, UnicodeEncodeError):
        return ("doubt", None)


def surrogates(value: Any) -> bool:
    """True when `value` holds a lone surrogate anywhere (a key included)."""
    if isinstance(value, str):
        return any("\ud800" <= c <= "\udfff" for c in value)
    if isinstance(value, dict):
        return any(surrogates(k) or surrogates(v) for k, v in value.items())
    if isinstance(value, list):
        return any(surrogates(v) for v in value)
    return False


def assert_written_alike(model: BaseModel, obj: Any) -> None:
    """The four dumps of `obj` (lean) are `model`'s (pydantic), value for value and byte for byte.

    Where pydantic refuses (a lone surrogate in a value) the lean writer refuses too; a lone
    surrogate in a key pydantic writes as U+FFFD, the lean writer doubts (the caller's pydantic
    fallback then writes what pydantic writes); nothing else is doubt.
    """
    odd = surrogates(model.model_dump())
    pairs = [
        (lambda: model.model_dump_json(indent=2).encode(), lambda: lean.dumps(obj)),
        (lambda: model.model_dump_json(exclude_none=True).encode(), lambda: lean.dump_line(obj)),
        (lambda: model.model_dump_json().encode(), lambda: lean.dump_compact(obj)),
        (
            lambda: model.model_dump_json(exclude_none=True).encode(),
            lambda: lean.dump_compact(obj, exclude_none=True),
        ),
    ]
    for pydantic_write, lean_write in pairs:
        written = outcome(lean_write)
        assert written == outcome(pydantic_write) or (odd and written[0] == "doubt")
    for drop in (False, True):
        expected = outcome(lambda drop=drop: typed(model.model_dump(mode="json", exclude_none=drop)))
        written = outcome(lambda drop=drop: typed(lean.to_json(obj, exclude_none=drop)))
        assert written == expected or (odd and written[0] == "doubt")


@SLOW
@given(any_instance())
def test_lean_writers_write_what_pydantic_writes(model: BaseModel) -> None:
    assert_written_alike(model, from_model(model))


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents())
def test_a_file_read_lean_is_written_back_as_pydantic_writes_it(case: tuple[str, bytes]) -> None:
    """The store's own round trip: any stored document pydantic accepts (tests/lean_documents.py's
    mutated seeds), read through the lean reader, is written back byte for byte as pydantic
    writes the model it validated (an int read into a float field, a time's offset, defaults)."""
    name, data = case
    try:
        model = lean_store.validated(data, name, where="f.json", what="file")
    except LoopxError:
        return
    assert_written_alike(model, lean_store.parse(data, name, where="f.json", what="file"))


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)
@given(instances(GoalState), st.data())
def test_goal_state_written_alike_after_the_same_claims_end(model: GoalState, data: st.DataObject) -> None:
    """`Todo.end_claim` (copied into the lean class) leaves both writing the same bytes."""
    obj = from_model(model)
    for _ in range(data.draw(st.integers(0, 4))):
        if not model.todos:
            break
        index = data.draw(st.integers(0, len(model.todos) - 1))
        status = data.draw(st.sampled_from(["open", "done", "blocked"]))
        now = data.draw(TIMES)
        model.todos[index].end_claim(status, now)  # type: ignore[arg-type]
        obj.todos[index].end_claim(status, now)
        model.version += 1
        obj.version += 1
    assert_written_alike(model, obj)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)
@given(instances(TurnJournal), st.data())
def test_turn_journal_written_alike_after_the_same_phases_are_recorded(
    model: TurnJournal, data: st.DataObject
) -> None:
    """`TurnJournal.record` builds a lean `PhaseRecord` with the receipt, as pydantic builds its own."""
    obj = from_model(model)
    for _ in range(data.draw(st.integers(1, 3))):
        name = data.draw(st.sampled_from(["host_execute", "validation", "quota_spend"]) | TEXT)
        at = data.draw(TIMES)
        receipt = data.draw(st.dictionaries(TEXT, JSON, max_size=3))
        model.record(name, at, receipt)
        obj.record(name, at, dict(receipt))
        assert type(obj.phases[-1]) is lean.PhaseRecord
    model.status = obj.status = data.draw(st.sampled_from(["committed", "failed"]))
    assert_written_alike(model, obj)
    assert obj == from_model(model)


@SLOW
@given(st.sampled_from(MODELS).flatmap(lambda m: st.tuples(st.just(m), instances(m), st.data())))
def test_lean_constructor_fills_what_pydantics_fills(case: tuple[type[BaseModel], BaseModel, Any]) -> None:
    """Given the required fields and any of the others, the lean constructor's object is the
    pydantic constructor's twin (defaults, factories) and keeps or copies each given value alike."""
    model, instance, data = case
    given_fields = {
        name: getattr(instance, name)
        for name, info in model.model_fields.items()
        if info.is_required() or data.draw(st.booleans(), label=name)
    }
    built = model(**given_fields)
    lean_given = {name: from_model(value) for name, value in given_fields.items()}
    obj = getattr(lean, model.__name__)(**lean_given)
    assert typed(lean.dump(obj)) == typed(lean.dump(from_model(built)))
    assert obj == from_model(built)
    assert_written_alike(built, obj)
    for name, value in given_fields.items():
        if type(value) in (list, dict):  # pydantic copies a container it is given, once
            assert (getattr(built, name) is value) == (getattr(obj, name) is lean_given[name]) is False
            assert getattr(obj, name) == lean_given[name]


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_lean_constructor_defaults_are_fresh_and_keywords_checked(model: type[BaseModel]) -> None:
    """A default factory gives each object its own list, dict or model; an unknown keyword, a
    missing required one, or a positional argument is a TypeError, as for any Python function."""
    cls = getattr(lean, model.__name__)
    required = {n: None for n, info in model.model_fields.items() if info.is_required()}
    one, two = cls(**required), cls(**required)
    for name, info in model.model_fields.items():
        if info.default_factory is not None:
            assert getattr(one, name) == getattr(two, name) and getattr(one, name) is not getattr(two, name)
    with pytest.raises(TypeError):
        cls(**required, not_a_field=1)
    with pytest.raises(TypeError):
        cls(None, **required)
    if required:
        with pytest.raises(TypeError):
            cls(**dict(list(required.items())[1:]))


def test_a_lean_object_of_the_wrong_type_is_doubt_not_a_wrong_file() -> None:
    """Built without validation, a lean object may hold what its twin cannot: the writer refuses
    (the caller asks pydantic, which gives its own error) rather than write another file."""
    now = datetime(2026, 11, 29, 12, tzinfo=UTC)
    good = lean.PhaseRecord(phase="p", at=now)
    assert lean.dumps(good) == PhaseRecord(phase="p", at=now).model_dump_json(indent=2).encode()
    wrong = [
        lean.PhaseRecord(phase=1, at=now),
        lean.PhaseRecord(phase="p", at="2026-11-29T12:00:00Z"),
        lean.PhaseRecord(phase="p", at=now, receipt={"k": float("nan")}),
        lean.PhaseRecord(phase="p", at=now, receipt={"k": (1, 2)}),
        lean.PhaseRecord(phase="p", at=now, receipt={1: "v"}),
        lean.PhaseRecord(phase="p", at=now, receipt={"k": {1, 2}}),
        lean.PhaseRecord(phase="\ud800", at=now),
        lean.QuotaPolicy(compute=True),
        lean.QuotaPolicy(compute=2**60),
        lean.Todo(todo_id="t", title="x", priority=2.0, created_at=now, updated_at=now),
        lean.Todo(todo_id="t", title="x", excluded_agents=("a",), created_at=now, updated_at=now),
    ]
    for obj in wrong:
        with pytest.raises(lean.Doubt):
            lean.dumps(obj)
            lean.dump_line(obj)
    with pytest.raises(TypeError):
        lean.dumps(PhaseRecord(phase="p", at=now))
    # an int in a float field is the float pydantic's validation makes of it
    assert lean.dumps(lean.QuotaPolicy(compute=1)) == TypeAdapter(Any).dump_json(
        {"compute": 1.0, "window_hours": 24.0, "slot_minutes": 1.0, "min_interval_minutes": 0.0}, indent=2
    )


class _Float(BaseModel):
    value: float


class _Time(BaseModel):
    value: datetime


class _Text(BaseModel):
    value: str


@settings(max_examples=3000, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False) | st.floats(1e-6, 1e-4) | st.floats(1e15, 1e17))
def test_floats_are_written_as_pydantic_writes_them(value: float) -> None:
    """serde's rule, found by this test: Python's shortest digits, decimal from 1e-5 to below 1e16,
    otherwise an exponent without zero padding, a `+` kept (`1e-7`, `1e+16`, `0.00001`)."""
    assert lean_writer.w_float(value).encode() == _Float(value=value).model_dump_json()[9:-1].encode()


@settings(max_examples=3000, deadline=None)
@given(st.datetimes(timezones=st.none() | OFFSETS))
def test_times_are_written_as_pydantic_writes_them(value: datetime) -> None:
    """Any year, microseconds or none, naive, UTC as Z, other offsets (seconds rounded then dropped)."""
    assert lean_writer.w_time(value) == _Time(value=value).model_dump_json()[9:-1]
    assert lean_writer.j_time(value) == _Time(value=value).model_dump(mode="json")["value"]


@settings(max_examples=3000, deadline=None)
@given(TEXT | st.text(st.characters(codec=None, exclude_categories=())))
def test_text_is_escaped_as_pydantic_escapes_it(value: str) -> None:
    """Controls, quotes, backslashes escaped, DEL, U+2028/9 and non-ASCII raw; a lone surrogate is
    refused by both."""
    pydantic_text = outcome(lambda: _Text(value=value).model_dump_json().encode()[9:-1])
    lean_text = outcome(lambda: lean.dump_line(lean.StoreConfig(schema_version=1, store=value))[28:-1])
    assert lean_text == pydantic_text


def test_offsets_of_seconds_are_written_as_pydantic_writes_them() -> None:
    for seconds in (-90, -61, -60, -59, -31, -30, -29, -1, 0, 1, 29, 30, 31, 59, 60, 61, 3599, 3630):
        for micro in (0, 499999, 500000, 999999):
            zone = timezone(timedelta(seconds=seconds, microseconds=micro))
            value = datetime(2026, 1, 1, tzinfo=zone)
            assert lean_writer.w_time(value) == _Time(value=value).model_dump_json()[9:-1], (seconds, micro)


WRITERS = ("loopx_core.models.lean_writer", "loopx_core.models.lean_dump", "loopx_claude_code.lean_dump")
"""The writers' modules: a read never needs them (generated apart, imported on the first write)."""


@pytest.mark.parametrize("argv", [["quota", "should-run", "-g", "demo", "-a", "builder"]])
def test_a_tick_loads_no_writer(tmp_path: Path, argv: list[str]) -> None:
    ran = probe(demo_project(tmp_path), argv)
    assert ran.exit_code == 0 and "loopx_core.models.lean" in ran.modules
    assert ran.modules & set(WRITERS) == set()


def test_the_first_write_loads_the_writers() -> None:
    code = (
        "import sys; from loopx_core.models import lean; "
        "before = sorted(set(sys.modules) & set(sys.argv[1:])); "
        "lean.dumps(lean.ReceiptIndex(schema_version=1)); "
        "print(before, sorted(set(sys.modules) & set(sys.argv[1:])))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, *WRITERS], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert proc.stdout.split() == [
        "[]",
        "['loopx_core.models.lean_dump',",
        "'loopx_core.models.lean_writer']",
    ]
