"""Stored documents for the lean-reader properties: a valid seed of every file kind, the values
and times to mutate them with, and what either reader makes of a document.

Shared by tests/test_lean_readers.py and tests/adversarial/test_canonical_ledger_lines.py.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import strategies as st

from loopx_core.errors import LoopxError
from loopx_core.models import lean
from loopx_core.store import lean as lean_store

T = "2026-11-29T12:00:00Z"
TURN_KEY = "sha256:" + "ab" * 32
IDENTITY = {
    "goal_id": "g",
    "agent_id": "a",
    "todo_id": "t1",
    "turn_instance_id": "ti-1",
    "replan_obligation_id": None,
}
SEEDS: dict[str, dict[str, Any]] = {
    "StoreConfig": {"schema_version": 1, "store": "postgresql://db.example/loopx?sslmode=require"},
    "Registry": {
        "schema_version": 1,
        "goals": {
            "g": {
                "goal_id": "g",
                "objective": "Ship",
                "status": "active",
                "created_at": T,
                "updated_at": T,
                "quota": {
                    "compute": 0.5,
                    "window_hours": 24.0,
                    "slot_minutes": 1.0,
                    "min_interval_minutes": 0.0,
                },
                "no_progress_limit": 3,
            },
        },
        "agents": {
            "a": {
                "agent_id": "a",
                "capabilities": ["python"],
                "host": None,
                "monitor_only": False,
                "cadence_minutes": 30.0,
                "registered_at": T,
                "updated_at": T,
            }
        },
    },
    "GoalState": {
        "schema_version": 1,
        "goal_id": "g",
        "version": 4,
        "next_todo_number": 3,
        "todos": [
            {
                "todo_id": "t1",
                "title": "Parse",
                "kind": "agent",
                "status": "claimed",
                "priority": 1,
                "required_capabilities": ["python"],
                "claimed_by": "a",
                "claimed_at": T,
                "lease_expires_at": "2026-11-29T12:30:00.250000+01:00",
                "bound_agent": None,
                "excluded_agents": ["b"],
                "blocks_agent": None,
                "evidence": [],
                "blocked_reason": None,
                "rescoped_at": None,
                "created_at": T,
                "updated_at": T,
            },
            {"todo_id": "t2", "title": "Decide", "kind": "user", "created_at": T, "updated_at": T},
        ],
        "gates": [
            {"gate_id": "gate1", "title": "Approve", "status": "open", "kind": "owner", "opened_at": T}
        ],
        "waiting_on": {
            "reason": "CI",
            "until": "2026-11-30T00:00:00Z",
            "poll_every_minutes": 5.0,
            "since": T,
        },
        "health": [{"code": "x", "severity": "low", "message": "m"}],
        "evidence": ["e"],
        "no_progress_turns": 0,
        "open_turns": {"a": TURN_KEY},
    },
    "LedgerEvent": {
        "schema_version": 1,
        "event_id": "ev-1",
        "seq": 1,
        "kind": "spend",
        "at": T,
        "goal_id": "g",
        "agent_id": "a",
        "todo_id": "t1",
        "turn_instance_id": "ti-1",
        "effect_id": "ff",
        "slots": 2,
        "duration_seconds": 42.5,
    },
    "TurnJournal": {
        "schema_version": 1,
        "turn_key": TURN_KEY,
        "goal_id": "g",
        "agent_id": "a",
        "identity": IDENTITY,
        "status": "open",
        "plan": ["validation", "durable_writeback"],
        "phases": [
            {"phase": "host_execute", "at": T, "receipt": {"exit": 0, "notes": [1.5, None, {"k": "v"}]}}
        ],
        "started_at": T,
        "updated_at": T,
        "host_result": {"summary": "s"},
        "failure": None,
        "lease_minutes": 30.0,
    },
    "SchedulerState": {
        "schema_version": 1,
        "goal_id": "g",
        "agents": {
            "a": {
                "applied_rrule": "FREQ=HOURLY",
                "paused": False,
                "unchanged_polls": 2,
                "acked_at": T,
                "failures": 0,
            }
        },
    },
    "RunIndexEntry": {
        "schema_version": 1,
        "run_id": "run-1",
        "at": T,
        "agent_id": "a",
        "todo_id": "t1",
        "turn_key": TURN_KEY,
        "validation": "passed",
        "summary": "Parsed",
        "progress": "todo_worked",
        "progress_detail": "",
    },
}
TIMES = [
    T,
    "2026-11-29T12:00:00.123456+05:30",
    "2026-11-29T12:00:00",
    "2026-11-29 12:00:00Z",
    "2026-11-29T12:00:00-00:00",
    "1969-12-31T23:59:59Z",
    "3100-01-01T00:00:00Z",
    "3099-12-31T23:59:59.999999Z",
    "2999-12-31T23:59:59+00:00",
    "2026-02-30T00:00:00Z",
    "2026-11-29T24:00:00Z",
    "2026-11-29T12:00:60Z",
    "2026-11-29T12:00:00.1234567Z",
    "2026-11-29T12:00:00+24:00",
    "2026-11-29T12:00:00z",
    "2026-11-29",
    "0001-01-01T00:00:00Z",
    "1764417600",
]
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**64), 2**64),
    st.sampled_from([0, 1, 2, 9, 10, 1000, 1001, 2**53, 2**53 + 1]),
    st.floats(),
    st.sampled_from([0.0, 1.0, 2.0, 0.5, 1.5, 0.01, 0.009, 87600.0, 87600.5, -0.0]),
    st.text(max_size=8),
    st.sampled_from(
        [
            "a",
            "A",
            "g",
            "t1",
            "..",
            "a..b",
            "x" * 64,
            "x" * 65,
            "-a",
            "open",
            "done",
            "spend",
            "void",
            "high",
            "agent",
            "user",
            TURN_KEY,
        ]
    ),
    st.sampled_from(TIMES),
    st.integers(1_700_000_000, 1_800_000_000),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)


def paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside `doc`."""
    found = [prefix] if prefix else []
    if isinstance(doc, dict):
        for key, value in doc.items():
            found += paths(value, (*prefix, key))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            found += paths(value, (*prefix, index))
    return found


@st.composite
def documents(draw: st.DrawFn, name: str | None = None) -> tuple[str, bytes]:
    """A file kind (`name`, or any) and a document: its seed with a few random mutations."""
    name = name or draw(st.sampled_from(sorted(SEEDS)))
    doc = copy.deepcopy(SEEDS[name])
    for _ in range(draw(st.integers(0, 3))):
        where = draw(st.sampled_from(paths(doc) or [()]))
        parent = doc
        for step in where[:-1]:
            parent = parent[step]
        action = draw(st.sampled_from(["tweak", "tweak", "replace", "drop", "add"]))
        if not where:
            continue
        if action == "tweak":
            parent[where[-1]] = draw(tweaks(parent[where[-1]]))
        elif action == "replace":
            parent[where[-1]] = draw(VALUES)
        elif action == "drop" and isinstance(parent, dict):
            del parent[where[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.sampled_from(["extra", "schema_version", "todos", "quota", "at"]))] = draw(VALUES)
    return name, json.dumps(doc).encode()


def tweaks(value: Any) -> st.SearchStrategy[Any]:
    """Values near `value`: the same number as another type, a time spelled otherwise, ..."""
    if isinstance(value, bool):
        return st.sampled_from([not value, int(value), str(value).lower(), None])
    if isinstance(value, int):
        return st.sampled_from([float(value), value + 0.5, str(value), -value, value * 10**9, value + 1, 0])
    if isinstance(value, float) and value - value == 0:
        return st.sampled_from(
            [int(value), str(value), value * 1e300 * 1e10, -value, value + 1e-9, float("nan")]
        )
    if isinstance(value, str):
        return st.sampled_from([*TIMES, value.upper(), value + ".", "", " " + value, 1, None])
    return VALUES


def typed(value: Any) -> Any:
    """`value` with every scalar's type kept (2 and 2.0 differ; a time by its instant and offset)."""
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [typed(v) for v in value]
    if hasattr(value, "utcoffset"):
        return ("time", value.timestamp(), value.utcoffset())
    return (type(value).__name__, value)


def outcome(read: Any) -> tuple[Any, ...]:
    """("ok", the values) or ("refused", error class, message)."""
    try:
        return ("ok", typed(lean.dump(read())))
    except LoopxError as error:
        return ("refused", type(error).__name__, error.message)


def pydantic_outcome(name: str, data: bytes) -> tuple[Any, ...]:
    """What the pydantic read (`atomic.read_model`'s validation) gives."""
    return outcome(
        lambda: lean_store.from_model(lean_store.validated(data, name, where="f.json", what="file"))
    )
