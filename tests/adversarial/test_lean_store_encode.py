"""Class: the settlement store never writes what pydantic would not, and writes what it would.

A real record of each kind the store writes (registry, goal state, journal, scheduler state,
a ledger line, a history line), with one attribute set to a generated value (another type, a
number out of range, NaN, a lone surrogate, a naive time, a nested object): `encode` writes
exactly pydantic's dump of the validated twin, or refuses with pydantic's own
`ValidationError` where pydantic refuses the record.
"""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

import loopx_core.models as pydantic_models
from loopx_core.models import lean
from loopx_core.ops import todos
from loopx_core.store.lean_encode import encode, encode_event, encode_history
from loopx_core.store.lean_store import LeanSettleStore
from tests.builders import build_project, settle_turn
from tests.conftest import T0

ODD = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**64), 2**64),
    st.floats(),
    st.text(max_size=5),
    st.sampled_from(["\ud800", "a\udcffb", "sha256:" + "a" * 64, "t1", "open", "Upper Case"]),
    st.sampled_from([datetime(2026, 11, 29, 12, 0), datetime(2026, 11, 29, 12, 0, tzinfo=UTC)]),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.one_of(st.integers(), st.text(max_size=2)), max_size=2),
)


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One lean record of every kind the store writes, read from a settled project."""
    root = tmp_path_factory.mktemp("records")
    build_project(root, agents=("a",), todo_count=2)
    store = LeanSettleStore(root)
    journal = settle_turn(store, "a", "t1")
    todos.claim_todo(store, "g", "t2", "a", T0)
    return {
        "Registry": store.read_registry(),
        "GoalState": store.read_goal("g"),
        "TurnJournal": journal,
        "SchedulerState": store.read_scheduler("g"),
        "Todo": store.read_goal("g").todos[1],
        "LedgerEvent": store.ledger_all("g")[0],
        "RunIndexEntry": store.read_history("g")[0],
    }


def _target(record: Any, draw: st.DrawFn) -> tuple[Any, str]:
    """A lean object inside `record` (itself, or one it holds) and one of its attributes."""
    holders = [record]
    for name in record.__slots__:
        value = getattr(record, name)
        values = value if isinstance(value, list) else value.values() if isinstance(value, dict) else [value]
        holders += [v for v in values if isinstance(v, lean._Lean)]
    holder = draw(st.sampled_from(holders))
    return holder, draw(st.sampled_from(holder.__slots__))


def _alike(value: Any) -> st.SearchStrategy[Any]:
    """A value of the same kind as `value`: what a caller would usually set."""
    if isinstance(value, bool):
        return st.booleans()
    if isinstance(value, int):
        return st.integers(0, 200)
    if isinstance(value, float):
        return st.one_of(st.floats(0, 200), st.integers(0, 200))
    if isinstance(value, str):
        return st.one_of(st.text(max_size=8), st.from_regex(r"[a-z0-9][a-z0-9._-]{0,8}", fullmatch=True))
    if isinstance(value, datetime):
        return st.datetimes(datetime(1971, 1, 1), datetime(3000, 1, 1), timezones=st.just(UTC))
    if isinstance(value, list):
        return st.lists(st.text(max_size=4), max_size=3)
    return ODD


def _pydantic(record: Any) -> Any:
    return getattr(pydantic_models, type(record).__name__).model_validate(lean.dump(record))


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_encode_writes_pydantics_bytes_or_pydantics_refusal(
    records: dict[str, Any], data: st.DataObject
) -> None:
    kind = data.draw(st.sampled_from(sorted(records)))
    record = copy.deepcopy(records[kind])
    holder, name = _target(record, data.draw)
    original = getattr(holder, name)
    object.__setattr__(holder, name, data.draw(st.one_of(_alike(original), ODD)))
    if kind == "LedgerEvent":
        write, dump = encode_event, lambda m: m.model_dump_json(exclude_none=True).encode()
    elif kind == "RunIndexEntry":
        write = encode_history

        def dump(m: Any) -> bytes:
            return json.dumps(m.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":")).encode()
    else:
        write, dump = encode, lambda m: m.model_dump_json(indent=2).encode() + b"\n"
    try:
        expected: bytes | type[Exception] = dump(_pydantic(record))
    except ValidationError:
        expected = ValidationError
    except ValueError:  # pydantic validates it but cannot write it (a lone surrogate)
        expected = ValueError
    try:
        written: bytes | type[Exception] = write(record)
    except ValidationError:
        written = ValidationError
    except ValueError:
        written = ValueError
    assert written == expected, (kind, name, getattr(holder, name))


def test_a_record_in_doubt_is_still_written_as_pydantic_writes_it(
    records: dict[str, Any], tmp_path: Path
) -> None:
    journal = copy.deepcopy(records["TurnJournal"])
    journal.lease_minutes = 30  # an int where a float goes: pydantic writes 30.0
    assert b'"lease_minutes": 30.0' in encode(journal)
