"""The documents of the PostgreSQL store: each row's JSON as its model, or as its lean twin.

`parsed` reads a row through the pydantic model or, for a tick, through the generated lean
reader (`loopx_core.store.lean`), which refuses exactly what the model refuses, with the same
error; `LeanPostgresReads` is a store's reads that way, as `LeanFileStore` is the file store's.
Neither imports pydantic until a document needs it.
"""

from __future__ import annotations

import importlib
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from loopx_core.store.atomic import explain

if TYPE_CHECKING:
    from pydantic import BaseModel

    from loopx_core.store.postgres.store import PostgresStore

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


class LeanPostgresReads:
    """The reads of a `PostgresStore` a tick (and a host's hooks) make, through the lean readers.

    Same rows, same errors as the store's own reads; only the parsing differs (pydantic settles
    any doubt). Read-only, as `loopx_core.store.lean.LeanFileStore` is for the file store.
    """

    def __init__(self, store: PostgresStore) -> None:
        self.store = store
        self.root = store.root
        self.label = store.label

    def read_registry(self) -> Any:
        """The registry (lean)."""
        return self.store._registry(lean=True)

    def read_goal(self, goal_id: str) -> Any:
        """A goal's state (lean)."""
        return self.store._goal(goal_id, lean=True)

    def read_journal(self, goal_id: str, turn_key: str) -> Any:
        """A turn journal (lean)."""
        return self.store._journal(goal_id, turn_key, lean=True)

    def read_scheduler(self, goal_id: str) -> Any:
        """The goal's scheduler state (lean; empty if no host reported yet)."""
        return self.store._scheduler(goal_id, lean=True)

    def ledger_since(self, goal_id: str, since: datetime) -> list[Any]:
        """Ledger events (lean) at or after `since`, oldest first."""
        return self.store._since(goal_id, since, lean=True)

    def read_history(self, goal_id: str, *, last: int | None = None) -> list[Any]:
        """The run history (lean; only its `last` entries if given), oldest first."""
        return self.store._history(goal_id, last, lean=True)
