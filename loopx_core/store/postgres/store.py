"""`PostgresStore`: the team store, the `Store` protocol on one PostgreSQL database, over psycopg.

Each document (registry, goal state, journal, scheduler state, run record) is one row holding
the JSON the file store would write, read and written through the same codec; ledger events
and history lines are rows of append-only tables with a unique constraint per receipt (one
spend per turn instance, one void per spend, one history line per run). Locks, retries and
transactions: `session`. The project folder keeps only what is local to the machine
(`.loopx/store.json` naming this store, host hook state).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from loopx_core.errors import ConflictError, NotFoundError, SchemaUnsupportedError
from loopx_core.faults import race_window
from loopx_core.ids import check_id
from loopx_core.models import codec
from loopx_core.models.constants import SCHEMA_VERSION
from loopx_core.models.identity import check_turn_key
from loopx_core.models.records import (
    GoalState,
    LedgerEvent,
    Registry,
    RunIndexEntry,
    SchedulerState,
    TurnJournal,
)
from loopx_core.store.files import STATE_DIR
from loopx_core.store.postgres import writes
from loopx_core.store.postgres.schema import LATEST, MIGRATIONS, SCHEMA_EXISTS, VERSION

if TYPE_CHECKING:
    from collections.abc import Callable
    from contextlib import AbstractContextManager
    from datetime import datetime

    import psycopg

    from loopx_core.models.record import Record
    from loopx_core.store.postgres.session import Session

    Conn = psycopg.Connection[Any]

T = TypeVar("T")
R = TypeVar("R")

NO_STATE = "no LoopX state in the store {}: run `loopx init --store ...` first"
REGISTRY_LOCK = ":registry"
MIGRATE_LOCK = ":migrate"


def goal_key(goal_id: str) -> str:
    """The advisory lock key of a goal (the id is checked, so it is safe inside SQL)."""
    return f":goal:{check_id('goal', goal_id)}"


class PostgresStore:
    """Registry, goal states, ledgers, journals, runs and scheduler state in PostgreSQL."""

    def __init__(self, root: Path | str, dsn: str, shown: str, *, pooled: bool = False) -> None:
        self.root = Path(root)
        self.label = shown
        self._dsn, self._pooled = dsn, pooled
        self._session: Session | None = None
        self._session_lock = threading.Lock()
        self._schema_checked = False

    @property
    def state_dir(self) -> Path:
        """The project's `.loopx` folder (what stays local to the machine)."""
        return self.root / STATE_DIR

    @property
    def session(self) -> Session:
        """Transactions, locks and retries over psycopg."""
        if self._session is None:
            with self._session_lock:  # one session per store, whichever of its threads comes first
                if self._session is None:
                    from loopx_core.store.postgres.session import Connections, Session

                    self._session = Session(Connections(self._dsn, self.label, pooled=self._pooled))
        return self._session

    @property
    def in_transaction(self) -> bool:
        """True when this thread runs inside a transaction of this store."""
        return self._session is not None and self._session.in_transaction

    def close(self) -> None:
        """Close this store's connections."""
        if self._session is not None:
            self._session.connections.close()

    # -- reads -------------------------------------------------------------------------
    def _rows(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        """The statement's rows (in the thread's transaction if it has one)."""
        self._ready()
        return self.session.read(lambda c: c.execute(sql, params).fetchall())  # type: ignore[arg-type]

    def _parsed(self, text: str, cls: type[R], what: str) -> R:
        return codec.parse(text, cls, what=what, where=f"{self.label} ({what})")  # type: ignore[arg-type]

    def _doc(self, sql: str, params: tuple[Any, ...], cls: type[R], what: str) -> R:
        """The one document `sql` selects, as a record of `cls`."""
        rows = self._rows(sql, params)
        if not rows:
            raise NotFoundError(f"{what} not found in the store {self.label}")
        return self._parsed(rows[0][0], cls, what)

    def _events(self, sql: str, params: tuple[Any, ...]) -> list[LedgerEvent]:
        return [self._parsed(row[0], LedgerEvent, "a line of the ledger") for row in self._rows(sql, params)]

    @staticmethod
    def _json(record: Record) -> str:
        """A document's row: the compact JSON the file store indents."""
        return codec.line(record).decode()

    # -- schema ------------------------------------------------------------------------
    def schema_version(self) -> int | None:
        """The database's LoopX schema version (None: no LoopX schema there yet)."""

        def query(conn: Conn) -> int | None:
            if conn.execute(SCHEMA_EXISTS).fetchone()[0] is False:  # type: ignore[index]
                return None
            row = conn.execute(VERSION).fetchone()
            return int(row[0]) if row else None

        return self.session.read(query)

    def _refuse_newer(self, version: int | None) -> None:
        if version is not None and version > LATEST:
            raise SchemaUnsupportedError(
                f"the store {self.label} has LoopX schema version {version}; this loopx knows up to "
                f"{LATEST} (database left unchanged)",
                path=self.label,
            )

    def migrate_schema(self) -> int:
        """Create the schema or bring it forward to the latest version; the version now."""

        def apply(conn: Conn) -> int:
            version = writes.schema_version_in(conn)
            self._refuse_newer(version)
            for target, sql in MIGRATIONS:
                if version is None or target > version:
                    conn.execute(sql)  # type: ignore[arg-type]
                    conn.execute("UPDATE loopx_schema SET version = %s, migrated_at = now()", (target,))
                    version = target
            return LATEST

        result = self.session.write([MIGRATE_LOCK], apply)
        self._schema_checked = True
        return result

    def _ready(self) -> None:
        """Check the schema once per store: newer refused (exit 8), older brought forward."""
        if self._schema_checked:
            return
        version = self.schema_version()
        if version is None:
            raise NotFoundError(NO_STATE.format(self.label))
        self._refuse_newer(version)
        if version < LATEST:
            self.migrate_schema()
        self._schema_checked = True

    # -- lifecycle ---------------------------------------------------------------------
    def is_initialized(self) -> bool:
        """True when the database holds a LoopX schema with a registry."""
        version = self.schema_version()
        if version is None:
            return False
        self._refuse_newer(version)
        return bool(
            self.session.read(lambda c: c.execute("SELECT count(*) FROM loopx_registry").fetchone()[0])
        )  # type: ignore[index]

    def init(self) -> bool:
        """Create (or bring forward) the schema and an empty registry; False if one exists."""
        self.migrate_schema()
        empty = self._json(Registry(schema_version=SCHEMA_VERSION))

        def create(conn: Conn) -> bool:
            cursor = conn.execute(
                "INSERT INTO loopx_registry (doc) VALUES (%s::json) ON CONFLICT DO NOTHING", (empty,)
            )
            return cursor.rowcount == 1

        return self.session.write([REGISTRY_LOCK], create)

    # -- registry ----------------------------------------------------------------------
    def read_registry(self) -> Registry:
        """The registry, validated."""
        try:
            return self._doc("SELECT doc::text FROM loopx_registry", (), Registry, "registry")
        except NotFoundError:
            raise NotFoundError(NO_STATE.format(self.label)) from None

    def update_registry(self, change: Callable[[Registry], T]) -> T:
        """Apply `change` to the registry under its lock, in one transaction."""
        self._ready()

        def body(conn: Conn) -> T:
            registry = self.read_registry()
            result = change(registry)
            race_window()
            conn.execute("UPDATE loopx_registry SET doc = %s::json", (self._json(registry),))
            return result

        return self.session.write([REGISTRY_LOCK], body)

    # -- goal state --------------------------------------------------------------------
    def read_goal(self, goal_id: str) -> GoalState:
        """A goal's state, validated."""
        sql = "SELECT doc::text FROM loopx_goals WHERE goal_id = %s"
        return self._doc(sql, (check_id("goal", goal_id),), GoalState, f"state of goal {goal_id!r}")

    def create_goal(self, state: GoalState) -> None:
        """Insert a new goal's first state; `ConflictError` if it has one."""
        self._ready()

        def body(conn: Conn) -> None:
            if conn.execute("SELECT 1 FROM loopx_goals WHERE goal_id = %s", (state.goal_id,)).fetchone():
                raise ConflictError(f"goal {state.goal_id!r} already has a state")
            conn.execute(
                "INSERT INTO loopx_goals (goal_id, version, doc) VALUES (%s, %s, %s::json)",
                (state.goal_id, state.version, self._json(state)),
            )

        self.session.write([goal_key(state.goal_id)], body)

    def update_goal(
        self, goal_id: str, change: Callable[[GoalState], T], *, expect_version: int | None = None
    ) -> T:
        """Compare-and-swap a goal's state under its lock; the version increments.

        The UPDATE itself is conditional on the version read, so the database enforces the
        swap too. `change` mutates the state in place; if it raises, nothing is written.
        """
        self._ready()

        def body(conn: Conn) -> T:
            state = self.read_goal(goal_id)
            if expect_version is not None and state.version != expect_version:
                raise ConflictError(
                    f"goal {goal_id!r} moved: expected version {expect_version}, found {state.version}"
                )
            read_version = state.version
            result = change(state)
            race_window()
            state.version = read_version + 1
            cursor = conn.execute(
                "UPDATE loopx_goals SET version = %s, doc = %s::json WHERE goal_id = %s AND version = %s",
                (state.version, self._json(state), goal_id, read_version),
            )
            if cursor.rowcount != 1:
                raise ConflictError(f"goal {goal_id!r} moved while it was being changed: retry")
            return result

        return self.session.write([goal_key(goal_id)], body)

    def goal_lock(self, goal_id: str) -> AbstractContextManager[None]:
        """The goal's lock: one transaction for the block, re-entrant in the thread."""
        key = goal_key(goal_id)
        self._ready()
        return self.session.locked(key)

    # -- scheduler ---------------------------------------------------------------------
    def read_scheduler(self, goal_id: str) -> SchedulerState:
        """The goal's scheduler state, validated (empty if no host reported yet)."""
        sql = "SELECT doc::text FROM loopx_scheduler WHERE goal_id = %s"
        try:
            return self._doc(sql, (check_id("goal", goal_id),), SchedulerState, "scheduler state")
        except NotFoundError:
            return SchedulerState(schema_version=SCHEMA_VERSION, goal_id=goal_id)

    def write_scheduler(self, state: SchedulerState) -> None:
        """Write the goal's scheduler state (goal lock held)."""
        self._ready()
        self.session.write(
            [goal_key(state.goal_id)],
            lambda conn: conn.execute(
                "INSERT INTO loopx_scheduler (goal_id, doc) VALUES (%s, %s::json) "
                "ON CONFLICT (goal_id) DO UPDATE SET doc = EXCLUDED.doc",
                (state.goal_id, self._json(state)),
            ),
        )

    # -- turn journals -----------------------------------------------------------------
    def read_journal(self, goal_id: str, turn_key: str) -> TurnJournal:
        """A turn journal (missing: `NotFoundError`; malformed: `StateInvalidError`)."""
        check_turn_key(turn_key)
        sql = "SELECT doc::text FROM loopx_journals WHERE goal_id = %s AND turn_key = %s"
        return self._doc(sql, (check_id("goal", goal_id), turn_key), TurnJournal, "turn journal")

    def read_journals(self, goal_id: str) -> list[TurnJournal]:
        """Every journal of the goal, by turn key (a malformed one: `StateInvalidError`)."""
        sql = "SELECT doc::text FROM loopx_journals WHERE goal_id = %s ORDER BY turn_key"
        return [
            self._parsed(row[0], TurnJournal, "turn journal")
            for row in self._rows(sql, (check_id("goal", goal_id),))
        ]

    def has_journal(self, goal_id: str, turn_key: str) -> bool:
        """True when the turn has a journal (open or a tombstone)."""
        check_turn_key(turn_key)
        self._ready()
        sql = "SELECT 1 FROM loopx_journals WHERE goal_id = %s AND turn_key = %s"
        return (
            self.session.read(lambda c: c.execute(sql, (check_id("goal", goal_id), turn_key)).fetchone())
            is not None
        )

    def write_journal(self, journal: TurnJournal) -> None:
        """Write a journal (goal lock held)."""
        check_turn_key(journal.turn_key)
        self._ready()
        self.session.write(
            [goal_key(journal.goal_id)],
            lambda conn: conn.execute(
                "INSERT INTO loopx_journals (goal_id, turn_key, doc) VALUES (%s, %s, %s::json) "
                "ON CONFLICT (goal_id, turn_key) DO UPDATE SET doc = EXCLUDED.doc",
                (journal.goal_id, journal.turn_key, self._json(journal)),
            ),
        )

    # -- ledger ------------------------------------------------------------------------
    def append_event(
        self, goal_id: str, build: Callable[[int, LedgerEvent | None], LedgerEvent]
    ) -> LedgerEvent:
        """Append the event `build(next_seq, last_event)` returns, under the goal lock.

        A racing machine that wins a receipt's unique constraint rolls this transaction
        back; the retry runs `build` again, which then finds the receipt (a replay).
        """
        self._ready()
        check_id("goal", goal_id)

        def body(conn: Conn) -> LedgerEvent:
            row = conn.execute(
                "SELECT body::text FROM loopx_events WHERE goal_id = %s ORDER BY seq DESC LIMIT 1", (goal_id,)
            ).fetchone()
            last = self._parsed(row[0], LedgerEvent, "a line of the ledger") if row else None
            event = build((last.seq + 1) if last else 1, last)
            race_window()
            if last is not None and event.at < last.at:
                event = event.replace(at=last.at)  # keep the ledger ordered by time
            writes.insert_event(conn, goal_id, event, codec.line(event, exclude_none=True).decode())
            return event

        return self.session.write([goal_key(goal_id)], body)

    def ledger_since(self, goal_id: str, since: datetime) -> list[LedgerEvent]:
        """Ledger events at or after `since`, oldest first."""
        sql = "SELECT body::text FROM loopx_events WHERE goal_id = %s AND at >= %s ORDER BY seq"
        return self._events(sql, (check_id("goal", goal_id), since))

    def ledger_all(self, goal_id: str) -> list[LedgerEvent]:
        """The whole ledger, oldest first."""
        return self._events(
            "SELECT body::text FROM loopx_events WHERE goal_id = %s ORDER BY seq",
            (check_id("goal", goal_id),),
        )

    # -- receipts (one row each, unique in the database) -------------------------------
    def spend_receipt(self, goal_id: str, turn_instance_id: str) -> LedgerEvent | None:
        """The spend already charged for this turn instance, however long ago (or None)."""
        found = self._events(
            "SELECT body::text FROM loopx_events WHERE goal_id = %s AND kind = 'spend' AND turn_instance_id = %s",
            (check_id("goal", goal_id), turn_instance_id),
        )
        return found[0] if found else None

    def void_receipt(self, goal_id: str, event_id: str) -> LedgerEvent | None:
        """The void already recorded for `event_id` (or None)."""
        found = self._events(
            "SELECT body::text FROM loopx_events WHERE goal_id = %s AND kind = 'void' AND voids_event_id = %s",
            (check_id("goal", goal_id), event_id),
        )
        return found[0] if found else None

    # -- runs --------------------------------------------------------------------------
    def run_indexed(self, goal_id: str, run_id: str) -> bool:
        """True when the run history lists `run_id`."""
        self._ready()
        sql = "SELECT 1 FROM loopx_run_index WHERE goal_id = %s AND run_id = %s"
        return (
            self.session.read(lambda c: c.execute(sql, (check_id("goal", goal_id), run_id)).fetchone())
            is not None
        )

    def record_run(self, goal_id: str, record: dict[str, Any], markdown: str, entry: RunIndexEntry) -> None:
        """Store the run record (JSON and Markdown) and add `entry` to the history once."""
        self._ready()
        check_id("goal", goal_id)

        def body(conn: Conn) -> None:
            writes.upsert_run(conn, goal_id, entry.run_id, record, markdown)
            if not conn.execute(
                "SELECT 1 FROM loopx_run_index WHERE goal_id = %s AND run_id = %s", (goal_id, entry.run_id)
            ).fetchone():
                writes.append_history(conn, goal_id, entry.run_id, self._json(entry))

        self.session.write([goal_key(goal_id)], body)

    def read_history(self, goal_id: str, *, last: int | None = None) -> list[RunIndexEntry]:
        """The run history (only its `last` entries if given), oldest first."""
        sql = "SELECT entry::text FROM loopx_run_index WHERE goal_id = %s ORDER BY position DESC LIMIT %s"
        params = (check_id("goal", goal_id), last if last is None or last >= 0 else 0)
        rows = reversed(self._rows(sql, params))
        return [self._parsed(row[0], RunIndexEntry, "a line of the run history") for row in rows]

    def read_run(self, goal_id: str, run_id: str) -> dict[str, Any]:
        """One run's full record, as written at its durable writeback."""
        check_id("run", run_id)
        self._ready()
        sql = "SELECT record::text FROM loopx_runs WHERE goal_id = %s AND run_id = %s"
        row = self.session.read(lambda c: c.execute(sql, (check_id("goal", goal_id), run_id)).fetchone())
        if row is None:
            raise NotFoundError(f"run {run_id!r} not found in goal {goal_id!r}")
        data = codec.loads(row[0])
        if not isinstance(data, dict) or data.get("schema_version") != 1:
            where = f"{self.label} (run {run_id})"
            raise SchemaUnsupportedError(f"run record {where} is not a schema 1 run record", path=where)
        return data
