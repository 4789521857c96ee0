"""The documents of the PostgreSQL store: each row's JSON as its model, or as its lean twin.

`parsed` reads a row through the pydantic model or, for a tick, through the generated lean
reader (`loopx_core.store.lean`), which refuses exactly what the model refuses, with the same
error (a store's `lean_reads()` read that way). Nothing here imports pydantic until a document
needs it.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on a tick
if TYPE_CHECKING:
    from typing import Any


def parsed(text: str, name: str, what: str, where: str, *, lean: bool = False) -> Any:
    """A stored document as model `name`, or with `lean` its lean twin: the same refusals either way
    (another schema_version: exit 8, left unchanged); `where` is the store, as messages name it."""
    from loopx_core.store import lean as lean_reader

    data, shown = text.encode(), f"{where} ({what})"
    if lean:
        return lean_reader.parse(data, name, where=shown, what=what)
    return lean_reader.validated(data, name, where=shown, what=what)


def parsed_all(texts: list[str], name: str, what: str, where: str, *, lean: bool = False) -> list[Any]:
    """Each of `texts` as `parsed` reads it (the rows of a ledger window or a run history)."""
    from loopx_core.store import lean as lean_reader

    shown = f"{where} ({what})"
    if lean:
        return lean_reader.parse_all(texts, name, where=shown, what=what)
    return [lean_reader.validated(text.encode(), name, where=shown, what=what) for text in texts]


def empty_scheduler(goal_id: str, *, lean: bool) -> Any:
    """The scheduler state of a goal no host has reported for yet."""
    if lean:
        from loopx_core.models import lean as lean_models

        return lean_models.CHECKERS["SchedulerState"]({"schema_version": 1, "goal_id": goal_id})
    from loopx_core.models.scheduler import SchedulerState

    return SchedulerState(schema_version=1, goal_id=goal_id)
