"""`models/twins.py`: what ops ask of a record is answered alike for a pydantic model and its lean twin.

- `check(option, name, value)` gives what `domain.check(option, alias, value)` gives, value for
  value, or the same one-line `UsageError`, for every input-domain alias and any value an op
  may be handed (the lean check answers when it is sure, pydantic otherwise);
- `to_json` of a lean twin is pydantic's `model_dump(mode="json")`, with `exclude_none` or not;
  a lean record holding a value the lean writer doubts is judged by pydantic (its coerced value,
  or its `ValidationError`), never a stray `Doubt`;
- `models(store)` is the store's namespace: the lean module for the settlement store, the
  pydantic models for a store that names none.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Annotated, Any, get_args, get_origin

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from loopx_core import models as pydantic_models
from loopx_core.errors import UsageError
from loopx_core.models import domain, lean, twins
from loopx_core.store.lean import from_model
from loopx_core.store.lean_store import LeanSettleStore
from tests.model_values import any_instance

ALIASES = sorted(
    name
    for name, alias in vars(domain).items()
    if get_origin(alias) is Annotated and get_origin(get_args(alias)[0]) is None
)
VALUES = st.one_of(
    st.integers(-(2**60), 2**60),
    st.floats(),
    st.sampled_from([0, 1, -1, 0.0, -0.0, 1e-7, 9, 10, 1000, 1001, 1_576_800, 1_576_801, math.inf, math.nan]),
    st.booleans(),
    st.none(),
    st.text(max_size=8),
    st.sampled_from(["1", "1.5", "g", "goal-1", "a..b", "x" * 65, "2026-11-29T12:00:00Z"]),
    st.datetimes(timezones=st.none() | st.just(UTC) | st.just(timezone(timedelta(hours=-5)))),
)


def _outcome(run: Any) -> tuple[Any, ...]:
    try:
        value = run()
    except UsageError as error:
        return ("refused", str(error))
    return ("ok", type(value), value if value == value else "nan")


@settings(max_examples=3000, deadline=None)
@given(st.sampled_from(ALIASES), VALUES)
def test_check_answers_as_the_domain_check(name: str, value: Any) -> None:
    alias = getattr(domain, name)
    expected = _outcome(lambda: domain.check("--x", alias, value))
    assert _outcome(lambda: twins.check("--x", name, value)) == expected, (name, value)
    if value is None:
        assert twins.check_optional("--x", name, None) is None


@settings(max_examples=400, deadline=None)
@given(any_instance(), st.booleans())
def test_to_json_of_a_lean_twin_is_pydantics(model: BaseModel, exclude_none: bool) -> None:
    """The same JSON data, or the same error (a lone surrogate in a free-form key, say)."""
    twin = from_model(model)
    expected = _dumped(lambda: model.model_dump(mode="json", exclude_none=exclude_none))
    assert _dumped(lambda: twins.to_json(twin, exclude_none=exclude_none)) == expected
    assert _dumped(lambda: twins.to_json(model, exclude_none=exclude_none)) == expected


def _dumped(dump: Any) -> tuple[str, Any]:
    try:
        return ("ok", dump())
    except Exception as error:  # pydantic's own refusal, whichever path reached it
        return ("refused", type(error).__name__)


def _todo(**changes: Any) -> Any:
    at = datetime(2026, 11, 29, 12, tzinfo=UTC)
    todo = lean.Todo(todo_id="t1", title="Write", created_at=at, updated_at=at)
    for name, value in changes.items():
        setattr(todo, name, value)
    return todo


def test_a_doubted_value_is_judged_by_pydantic() -> None:
    """A str where an int belongs: pydantic's lax reading of it, as a pydantic store would dump it."""
    got = twins.to_json(_todo(priority="3"))
    assert got["priority"] == 3
    assert got == twins.to_json(_todo(priority=3))


@pytest.mark.parametrize("value", ["nine", math.nan, [1]], ids=repr)
def test_a_value_pydantic_refuses_is_its_validation_error(value: Any) -> None:
    with pytest.raises(ValidationError):
        twins.to_json(_todo(priority=value))


def test_models_is_the_stores_namespace(tmp_path: Path) -> None:
    assert twins.models(LeanSettleStore(tmp_path)) is lean
    assert twins.models(object()) is pydantic_models
    assert twins.models(object()).TurnJournal.__module__ == "loopx_core.models.journal"


@settings(max_examples=200, deadline=None)
@given(any_instance())
def test_replaced_copies_as_model_copy_does(model: BaseModel) -> None:
    name = next(iter(type(model).model_fields))
    value = getattr(model, name)
    twin = from_model(model)
    lean_copy, pydantic_copy = twins.replaced(twin, **{name: value}), twins.replaced(model, **{name: value})
    assert lean_copy == twin and lean_copy is not twin and pydantic_copy == model
    assert _dumped(lambda: twins.to_json(lean_copy)) == _dumped(lambda: pydantic_copy.model_dump(mode="json"))
