"""Generated pydantic models of every stored file kind, for the lean writer and constructor properties.

`instances(Model)` draws a valid instance: each field's value drawn from its annotation (its
bounds, id pattern and time range), every optional field present or left to its default, any
text (control characters, U+2028, astral, lone surrogates), any finite float, times in any
offset (whole minutes, seconds, microseconds, IANA zones). Shared by tests/test_lean_writers.py.
"""

from __future__ import annotations

import types
from datetime import UTC, datetime, timedelta, timezone
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from annotated_types import Ge, Gt, Le, Lt
from hypothesis import strategies as st
from pydantic import AfterValidator, BaseModel, StringConstraints, ValidationError
from pydantic.fields import FieldInfo

from loopx_core.models.goal import GoalState
from loopx_core.models.journal import TurnJournal
from loopx_core.models.ledger import LedgerEvent
from loopx_core.models.registry import Registry
from loopx_core.models.runs import RunIndexEntry
from loopx_core.models.scheduler import SchedulerState
from loopx_core.store.config import StoreConfig
from loopx_core.store.receipt_index import ReceiptIndex

ROOTS: tuple[type[BaseModel], ...] = (
    Registry,
    GoalState,
    LedgerEvent,
    TurnJournal,
    SchedulerState,
    RunIndexEntry,
    StoreConfig,
    ReceiptIndex,
)
"""The stored files the lean module writes."""


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
        if isinstance(item, AfterValidator) and "_time_before" in item.func.__qualname__:
            pass  # TIMES stays inside every time range but the edges, which pydantic refuses
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
