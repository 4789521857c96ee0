"""Generated documents of every stored file kind, valid and damaged, for tests/test_records.py.

`instances(Model)` draws a valid instance of a schema model: each field's value drawn from its
annotation (its bounds, id pattern and time range), every optional field present or left to
its default, any text (control characters, U+2028, astral, lone surrogates), any finite float,
times in any offset (whole minutes, seconds, microseconds, IANA zones). `documents()` draws a
valid seed of a file kind with a few random mutations (the same number as another type, a time
spelled otherwise, a key dropped or added, ...).
"""

from __future__ import annotations

import copy
import json
import types
from datetime import UTC, datetime, timedelta, timezone
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from annotated_types import Ge, Gt, Le, Lt
from hypothesis import strategies as st
from pydantic import BaseModel, StringConstraints, ValidationError
from pydantic.fields import FieldInfo

from loopx_core.schema.goal import GoalState
from loopx_core.schema.journal import TurnJournal
from loopx_core.schema.ledger import LedgerEvent
from loopx_core.schema.notices import OutboxRecord, SinkFile
from loopx_core.schema.receipts import ReceiptIndex
from loopx_core.schema.registry import Registry
from loopx_core.schema.runs import RunIndexEntry
from loopx_core.schema.scheduler import SchedulerState
from loopx_core.schema.store import StoreConfig

ROOTS: tuple[type[BaseModel], ...] = (
    Registry,
    GoalState,
    LedgerEvent,
    TurnJournal,
    SchedulerState,
    RunIndexEntry,
    StoreConfig,
    ReceiptIndex,
    OutboxRecord,
    SinkFile,
)
"""The stored files."""


def _reachable(model: type[BaseModel], found: list[type[BaseModel]]) -> list[type[BaseModel]]:
    if model not in found:
        for info in model.model_fields.values():
            for inner in _models_in(info.annotation):
                _reachable(inner, found)
        found.append(model)
    return found


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in get_args(annotation) for m in _models_in(arg)]


MODELS: list[type[BaseModel]] = []
for _root in ROOTS:
    _reachable(_root, MODELS)
"""Every model a stored file holds, contained ones first."""

SPECIAL_TEXT = [
    "",
    "\x00",
    "\x1f",
    "\x7f",
    "\u2028",
    "\u2029",
    '"',
    "\\",
    "é",
    "😀",
    "\ud800",
    "\udfff",
    "\u0085",
]
TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=6) | st.sampled_from(SPECIAL_TEXT)
"""Any text, lone surrogates included (pydantic cannot write those as JSON)."""
OFFSETS = st.one_of(
    st.just(UTC),
    st.integers(-23 * 60 - 59, 23 * 60 + 59).map(lambda m: timezone(timedelta(minutes=m))),
    st.timedeltas(-timedelta(hours=23, minutes=59), timedelta(hours=23, minutes=59)).map(timezone),
    st.sampled_from([timedelta(seconds=s) for s in (-90, -59, -30, -1, 1, 29, 30, 31, 59, 61)]).map(timezone),
    st.timezones(),
)
TIMES = st.datetimes(datetime(1970, 1, 2), datetime(3099, 12, 30), timezones=OFFSETS)
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT
    | TIMES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
"""A free JSON object's values (and times: pydantic keeps a datetime given in python mode)."""
IDENTITIES = st.fixed_dictionaries(
    {
        "goal_id": st.sampled_from(["g", "goal-1"]),
        "agent_id": st.sampled_from(["a", "agent.2"]),
        "turn_instance_id": st.sampled_from(["ti-1", "x"]),
    }
).flatmap(
    lambda base: st.sampled_from([("t1", None), (None, "replan-1")]).map(
        lambda bind: {**base, "todo_id": bind[0], "replan_obligation_id": bind[1]}
    )
)
OVERRIDES: dict[tuple[type[BaseModel], str], st.SearchStrategy[Any]] = {(TurnJournal, "identity"): IDENTITIES}
"""Fields whose validator random values would almost never pass."""


def _flatten(metadata: list[Any]) -> list[Any]:
    out: list[Any] = []
    for item in metadata:
        out += (item.metadata or []) if isinstance(item, FieldInfo) else [item]
    return out


def values(annotation: Any, metadata: list[Any] | None = None) -> st.SearchStrategy[Any]:
    """Values for a field of `annotation` (mostly inside its constraints: pydantic judges)."""
    metadata = list(metadata or [])
    origin = get_origin(annotation)
    if origin is Annotated:
        base, *more = get_args(annotation)
        return values(base, [*more, *metadata])
    if origin in (Union, types.UnionType):
        options = [a for a in get_args(annotation) if a is not type(None)]
        return st.none() | st.one_of([values(o, metadata) for o in options])
    if origin is Literal:
        return st.sampled_from(get_args(annotation))
    if origin is list:
        return st.lists(values(get_args(annotation)[0]), max_size=3)
    if origin is dict:
        key, value = get_args(annotation)
        return st.dictionaries(values(key), values(value) if value is not Any else JSON, max_size=3)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return instances(annotation)
    if annotation is Any:
        return JSON
    bounds: dict[str, Any] = {}
    pattern = None
    for item in _flatten(metadata):
        for kind in (Ge, Gt, Le, Lt):
            if isinstance(item, kind):
                bounds[kind.__name__.lower()] = getattr(item, kind.__name__.lower())
        if isinstance(item, StringConstraints):
            pattern = item.pattern
    if annotation is bool:
        return st.booleans()
    low = bounds.get("ge", bounds.get("gt"))
    high = bounds.get("le", bounds.get("lt"))
    if annotation is int:
        return st.integers(low, high)
    if annotation is float:
        floats = st.floats(
            low,
            high,
            allow_nan=False,
            allow_infinity=False,
            exclude_min="gt" in bounds,
            exclude_max="lt" in bounds,
        )
        near = [b for b in (low, high) if b is not None]
        return (
            floats
            | st.sampled_from([*near, 1e-5, 1.234e-5, 1e-7, 1e16, 0.1, 1e22, 5e-324])
            | st.integers(-(2**53), 2**53)
        )
    if annotation is str:
        return st.from_regex(pattern, fullmatch=True) if pattern else TEXT
    return TIMES  # datetime, AwareDatetime


@st.composite
def instances(draw: st.DrawFn, model: type[BaseModel]) -> BaseModel:
    """A valid instance of `model`: every required field, each optional one present or not."""
    fields: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        if not info.is_required() and draw(st.booleans()):
            continue
        strategy = OVERRIDES.get((model, name))
        if strategy is None:
            strategy = values(info.annotation, list(info.metadata))
        fields[name] = draw(strategy)
    try:
        return model(**fields)
    except ValidationError:
        from hypothesis import reject

        reject()


def any_instance() -> st.SearchStrategy[BaseModel]:
    """An instance of any stored model."""
    return st.sampled_from(MODELS).flatmap(instances)


# -- damaged documents: a valid seed of each file kind, mutated -------------------------------

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
TIME_TEXTS = [
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
    st.sampled_from(TIME_TEXTS),
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
        return st.sampled_from([*TIME_TEXTS, value.upper(), value + ".", "", " " + value, 1, None])
    return VALUES
