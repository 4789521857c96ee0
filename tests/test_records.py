"""The records every file is read and written through, held to the pydantic schema they come from.

One reader and one writer (`loopx_core.models.codec`), generated from one declaration
(`loopx_core.schema`): the generated module is current; every document the schema's models
write is read back to the same values and written again to the same JSON; a document the
reader takes is one the schema takes, with the same values; and a document strict pydantic
refuses, the reader refuses too (exit 4, or 8 for another schema version), never reading it
quietly.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from loopx_core.errors import SchemaUnsupportedError, StateInvalidError
from loopx_core.models import codec, records
from loopx_core.models.record import Invalid, Record
from loopx_core.schema import goal, journal, ledger, notices, receipts, registry, runs, scheduler, store
from tests.record_documents import MODELS, SEEDS, documents, instances

REPO = Path(__file__).resolve().parent.parent
SCHEMA: dict[str, type[BaseModel]] = {
    m.__name__: m
    for module in (goal, journal, ledger, notices, receipts, registry, runs, scheduler, store)
    for m in vars(module).values()
    if isinstance(m, type) and issubclass(m, BaseModel) and m.__module__ == module.__name__
}


def record_of(model: type[BaseModel]) -> type[Record]:
    return getattr(records, model.__name__)  # type: ignore[no-any-return]


def test_the_generated_records_are_current() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "gen_records.py"), "--check"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_every_schema_model_has_its_record_with_the_same_fields() -> None:
    assert {r.__name__ for r in records.RECORDS} == set(SCHEMA) - {"StrictModel"}
    for name, model in SCHEMA.items():
        if name != "StrictModel":
            assert list(getattr(records, name).FIELDS) == list(model.model_fields)


def _same(value: Any) -> Any:
    """JSON data with each time as its instant and offset (`-00:00` and `Z` are one offset)."""
    if isinstance(value, dict):
        return {k: _same(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_same(v) for v in value]
    if isinstance(value, str) and len(value) >= 20 and value[4:5] == "-" and value[10:11] == "T":
        try:
            when = datetime.fromisoformat(value)
        except ValueError:
            return value
        return ("time", when.timestamp(), when.utcoffset()) if when.utcoffset() is not None else value
    return (type(value).__name__, value)


def _written(instance: BaseModel) -> bytes:
    try:
        return instance.model_dump_json().encode()
    except ValueError:  # a lone surrogate: pydantic cannot write it, nor can LoopX
        assume(False)
        raise


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(st.sampled_from(MODELS).flatmap(lambda m: st.tuples(st.just(m), instances(m))))
def test_what_the_schema_writes_reads_back_and_writes_again_the_same(case: tuple[Any, BaseModel]) -> None:
    model, instance = case
    data = _written(instance)
    record = codec.parse(data, record_of(model), what="file", where="f.json")
    assert _same(record.dump()) == _same(json.loads(data))
    again = codec.parse(codec.line(record), record_of(model), what="file", where="f.json")
    assert again == record
    assert _same(json.loads(codec.document(record))) == _same(json.loads(data))


def _pydantic(name: str, data: bytes, *, strict: bool) -> Any:
    try:
        return json.loads(SCHEMA[name].model_validate_json(data, strict=strict).model_dump_json())
    except ValidationError:
        return None


def _ours(name: str, data: bytes) -> Any:
    try:
        return codec.parse(data, getattr(records, name), what="file", where="f.json").dump()
    except SchemaUnsupportedError as refused:
        assert "schema_version" in refused.message and "f.json" in refused.message
        return None
    except StateInvalidError as refused:
        assert refused.message.startswith("file at f.json ")
        return None


@settings(max_examples=1500, suppress_health_check=[HealthCheck.too_slow])
@given(documents())
def test_a_document_the_reader_takes_is_one_the_schema_takes_with_the_same_values(
    doc: tuple[str, bytes],
) -> None:
    name, data = doc
    ours = _ours(name, data)
    if ours is not None:
        assert _same(_pydantic(name, data, strict=False)) == _same(ours)


@settings(max_examples=1500, suppress_health_check=[HealthCheck.too_slow])
@given(documents())
def test_a_document_strict_pydantic_refuses_the_reader_refuses(doc: tuple[str, bytes]) -> None:
    name, data = doc
    if _pydantic(name, data, strict=True) is None:
        assert _ours(name, data) is None


@pytest.mark.parametrize("name", sorted(SEEDS))
def test_every_seed_is_read(name: str) -> None:
    data = json.dumps(SEEDS[name]).encode()
    assert _same(_ours(name, data)) == _same(_pydantic(name, data, strict=True))


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (b"", "is not valid JSON (empty)"),
        (b'{"schema_version": 1, "goal_id": "g"', "is not valid JSON (truncated?)"),
        (b'{"schema_version": 1, "goal_id": NaN}', "invalid at goal_id"),
        (b'{"schema_version": 1, "goal_id": "g", "version": Infinity}', "invalid at version"),
        (b"[" * 100_000, "nested too deeply"),
        (b"\xff\xfe", "is not valid JSON"),
        (
            b'{"schema_version": 1, "goal_id": "g", "version": -1}',
            "invalid at version: must be a whole number",
        ),
        (b'{"schema_version": 1, "goal_id": "G"}', "invalid at goal_id: must be a valid id"),
        (b'{"schema_version": 1, "goal_id": "g", "x": 1}', "invalid at x: is not a field of GoalState"),
        (b'{"schema_version": 1, "goal_id": "g", "todos": [{"todo_id": "t1"}]}', "invalid at todos.0.title"),
    ],
)
def test_a_damaged_goal_state_is_refused_naming_where(text: bytes, why: str) -> None:
    with pytest.raises(StateInvalidError) as refused:
        codec.parse(text, records.GoalState, what="state", where="goals/g/state.json")
    assert type(refused.value) is StateInvalidError
    assert why in refused.value.message


@pytest.mark.parametrize("version", [2, 0, None, "1", [1], {"v": 1}, 1.5])
def test_another_schema_version_is_unsupported(version: object) -> None:
    data = json.dumps({**SEEDS["GoalState"], "schema_version": version}).encode()
    with pytest.raises(SchemaUnsupportedError) as refused:
        codec.parse(data, records.GoalState, what="state", where="goals/g/state.json")
    assert "file left unchanged" in refused.value.message


def test_a_record_built_in_code_is_checked_as_a_read_one() -> None:
    with pytest.raises(Invalid) as bad:
        records.Todo(
            todo_id="t1", title="x", priority=10, created_at=datetime.now(), updated_at=datetime.now()
        )
    assert bad.value.location == "priority"
    with pytest.raises(Invalid):
        records.Todo(todo_id="t1", title="x", created_at=datetime.now(), updated_at=datetime.now())
    todo = records.Todo(
        todo_id="t1",
        title="x",
        created_at=datetime.fromisoformat(SEEDS["GoalState"]["todos"][0]["created_at"]),
        updated_at=datetime.fromisoformat("2026-11-29T12:00:00+00:00"),
    )
    todo.priority = 10  # a change in place is checked when it is written
    with pytest.raises(Invalid) as unwritten:
        codec.document(todo)
    assert unwritten.value.location == "priority"
