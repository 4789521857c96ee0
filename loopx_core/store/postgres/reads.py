"""The store's document reads, once: their SQL and how a row becomes a document or an error.

`DocumentReads` is shared by `PostgresStore` (rows through psycopg, documents validated by
the models) and `LeanPostgresReads` (rows through libpq when it can, documents through the
lean readers): the same statements, the same "not found" and schema refusals, so the two
differ only in the transport and the parser.
"""

from __future__ import annotations

from loopx_core.errors import NotFoundError
from loopx_core.ids import check_id
from loopx_core.models.identity import check_turn_key
from loopx_core.store.postgres.documents import empty_scheduler, parsed, parsed_all

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on a tick
if TYPE_CHECKING:
    from typing import Any

    from loopx_core.datetimes import datetime

SCHEMA_EXISTS = "SELECT to_regclass('loopx_schema') IS NOT NULL"
VERSION = "SELECT version FROM loopx_schema"
REGISTRY = "SELECT doc::text FROM loopx_registry"
GOAL = "SELECT doc::text FROM loopx_goals WHERE goal_id = %s"
SCHEDULER = "SELECT doc::text FROM loopx_scheduler WHERE goal_id = %s"
JOURNAL = "SELECT doc::text FROM loopx_journals WHERE goal_id = %s AND turn_key = %s"
EVENTS_SINCE = "SELECT body::text FROM loopx_events WHERE goal_id = %s AND at >= %s ORDER BY seq"
HISTORY = "SELECT entry::text FROM loopx_run_index WHERE goal_id = %s ORDER BY position DESC LIMIT %s"
NO_STATE = "no LoopX state in the store {}: run `loopx init --store ...` first"


class DocumentReads:
    """A store's reads of documents, over `_rows` (a statement's rows) after `_ready` (the schema check)."""

    label: str

    def _rows(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def _ready(self) -> None:
        raise NotImplementedError

    def _doc(self, sql: str, params: tuple[Any, ...], name: str, what: str, *, lean: bool) -> Any:
        """The one document `sql` selects, as model `name` (or its lean twin)."""
        self._ready()
        rows = self._rows(sql, params)
        if not rows:
            raise NotFoundError(f"{what} not found in the store {self.label}")
        return parsed(rows[0][0], name, what, self.label, lean=lean)

    def _registry(self, *, lean: bool) -> Any:
        try:
            return self._doc(REGISTRY, (), "Registry", "registry", lean=lean)
        except NotFoundError:
            raise NotFoundError(NO_STATE.format(self.label)) from None

    def _goal(self, goal_id: str, *, lean: bool) -> Any:
        params = (check_id("goal", goal_id),)
        return self._doc(GOAL, params, "GoalState", f"state of goal {goal_id!r}", lean=lean)

    def _scheduler(self, goal_id: str, *, lean: bool) -> Any:
        try:
            params = (check_id("goal", goal_id),)
            return self._doc(SCHEDULER, params, "SchedulerState", "scheduler state", lean=lean)
        except NotFoundError:
            self._ready()
            return empty_scheduler(goal_id, lean=lean)

    def _journal(self, goal_id: str, turn_key: str, *, lean: bool) -> Any:
        check_turn_key(turn_key)
        params = (check_id("goal", goal_id), turn_key)
        return self._doc(JOURNAL, params, "TurnJournal", "turn journal", lean=lean)

    def _events(self, sql: str, params: tuple[Any, ...], *, lean: bool = False) -> list[Any]:
        self._ready()
        texts = [row[0] for row in self._rows(sql, params)]
        return parsed_all(texts, "LedgerEvent", "a line of the ledger", self.label, lean=lean)

    def _since(self, goal_id: str, since: datetime, *, lean: bool) -> list[Any]:
        return self._events(EVENTS_SINCE, (check_id("goal", goal_id), since), lean=lean)

    def _history(self, goal_id: str, last: int | None, *, lean: bool) -> list[Any]:
        self._ready()
        params = (check_id("goal", goal_id), last if last is None or last >= 0 else 0)
        texts = [row[0] for row in reversed(self._rows(HISTORY, params))]
        return parsed_all(texts, "RunIndexEntry", "a line of the run history", self.label, lean=lean)
