"""The documents of the PostgreSQL store: each row's JSON as its model, or as its lean twin.

`parsed` reads a row through the pydantic model or, for a tick, through the generated lean
reader (`loopx_core.store.lean`), which refuses exactly what the model refuses, with the same
error (a store's `lean_reads()` read that way). Nothing here imports pydantic until a document
needs it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, TypeVar

from loopx_core.store.atomic import explain

if TYPE_CHECKING:
    from pydantic import BaseModel

M = TypeVar("M", bound="BaseModel")


def validated(text: str, model: type[M], what: str, where: str) -> M:
    """A stored document through its model (another schema_version: exit 8, left unchanged)."""
    from pydantic import ValidationError

    try:
        return model.model_validate_json(text)
    except ValidationError as exc:
        raise explain(f"{where} ({what})", text.encode(), what, exc) from None


def parsed(text: str, name: str, what: str, where: str, *, lean: bool = False) -> Any:
    """A stored document as model `name`, or with `lean` its lean twin: the same refusals either way."""
    from loopx_core.store import lean as lean_reader

    if lean:
        return lean_reader.parse(text.encode(), name, where=f"{where} ({what})", what=what)
    model = getattr(importlib.import_module(lean_reader.MODEL_MODULES[name]), name)
    return validated(text, model, what, where)


def empty_scheduler(goal_id: str, *, lean: bool) -> Any:
    """The scheduler state of a goal no host has reported for yet."""
    if lean:
        from loopx_core.models import lean as lean_models

        return lean_models.CHECKERS["SchedulerState"]({"schema_version": 1, "goal_id": goal_id})
    from loopx_core.models.scheduler import SchedulerState

    return SchedulerState(schema_version=1, goal_id=goal_id)
