"""`PostgresStore`: the team store, the `Store` protocol on one PostgreSQL database.

Each document (registry, goal state, journal, scheduler state, run record) is one row
holding the JSON the file store would write, validated by the same models on every read;
ledger events and history lines are rows of append-only tables with a unique constraint
per receipt (one spend per turn instance, one void per spend, one history line per run).
Locks, retries and transactions: `session` (psycopg) and `lean_session` (libpq through
ctypes, the same statements, psycopg on any doubt). The project folder keeps only what is
local to the machine (`.loopx/store.json` naming this store, host hook state).

pydantic and the models load on a validated read or a write of a model only, and psycopg
only where the lean transport is unsure (or for a pooled store, a migration, the schema's
creation): a tick reads through `lean_reads()` (`lean_reads.LeanPostgresReads`: libpq and the
generated lean readers), a settlement command writes through `tx` (`lean_session`), and
`lean_store.LeanSettlePostgresStore` reads and writes lean objects, so neither loads either.
"""

from __future__ import annotations

import os
from _thread import allocate_lock

from loopx_core import jsontext
from loopx_core.errors import ConflictError, NotFoundError, SchemaUnsupportedError
from loopx_core.faults import race_window
from loopx_core.ids import check_id
from loopx_core.models.constants import SCHEMA_VERSION
from loopx_core.models.identity import check_turn_key
from loopx_core.models.twins import replaced
from loopx_core.store.files import STATE_DIR
from loopx_core.store.postgres import writes
from loopx_core.store.postgres.documents import parsed
from loopx_core.store.postgres.lean_reads import LeanLink, LeanPostgresReads
from loopx_core.store.postgres.reads import NO_STATE, SCHEMA_EXISTS, VERSION, DocumentReads
from loopx_core.store.postgres.schema import LATEST, MIGRATIONS

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on a tick
if TYPE_CHECKING:
    from collections.abc import Callable
    from contextlib import AbstractContextManager
    from pathlib import Path
    from typing import Any, TypeVar

    import psycopg

    from loopx_core.datetimes import datetime
    from loopx_core.models import GoalState, LedgerEvent, Registry
    from loopx_core.models.journal import TurnJournal
    from loopx_core.models.runs import RunIndexEntry
    from loopx_core.models.scheduler import SchedulerState
    from loopx_core.store.postgres.lean_session import LeanSession
    from loopx_core.store.postgres.session import Session

    Conn = psycopg.Connection[Any]
    T = TypeVar("T")

REGISTRY_LOCK = ":registry"
MIGRATE_LOCK = ":migrate"


def goal_key(goal_id: str) -> str:
    """The advisory lock key of a goal (the id is checked, so it is safe inside SQL)."""
    return f":goal:{check_id('goal', goal_id)}"


class PostgresStore(DocumentReads):
    """Registry, goal states, ledgers, journals, runs and scheduler state in PostgreSQL."""

    _lean_docs = False
    """Reads give pydantic models (`lean_store.LeanSettlePostgresStore`'s give lean objects)."""

    def __init__(self, root: Path | str, dsn: str, shown: str, *, pooled: bool = False) -> None:
        self.root = root  # a tick may open the store on a string path: nothing here needs pathlib
        self.label = shown
        self._dsn, self._pooled = dsn, pooled
        self._session: Session | None = None
        self._session_lock = allocate_lock()  # threading's Lock, without importing threading on a tick
        self.lean_link = LeanLink(dsn, enabled=not pooled)  # a pooled store (a long process) has psycopg
        self._lean: LeanSession | None = None  # the writes' libpq session, made on first use
        self._schema_checked = False
        self.tick_goal: str | None = None
        """The goal a tick will read (`choice.TickStart`): its documents come in its first statement."""

    @property
    def root_text(self) -> str:
        """The project folder as a string."""
        return os.fspath(self.root)

    @property
    def state_dir(self) -> Path:
        """The project's `.loopx` folder (what stays local to the machine)."""
        from pathlib import Path

        return Path(self.root) / STATE_DIR

    @property
    def session(self) -> Session:
        """Transactions, locks and retries over psycopg (imported on first use)."""
        if self._session is None:
            with self._session_lock:  # one session per store, whichever of its threads comes first
                if self._session is None:
                    from loopx_core.store.postgres.session import Connections, Session

                    self._session = Session(Connections(self._dsn, self.label, pooled=self._pooled))
        return self._session

    @property
    def tx(self) -> LeanSession | Session:
        """Where the store's operations run: libpq's lean session (psycopg once it is unsure, and
        in any other thread), or psycopg's own for a pooled store."""
        if self._pooled:
            return self.session
        if self._lean is None:
            from loopx_core.store.postgres.lean_session import LeanSession  # not on a tick: it only reads

            self._lean = LeanSession(
                self.lean_link,
                self.label,
                lambda: self.session,
                lambda: self._session is not None and self._session.in_transaction,
            )
        return self._lean

    @property
    def in_transaction(self) -> bool:
        """True when this thread runs inside a transaction of this store."""
        lean, plain = self._lean, self._session
        return (lean is not None and lean.in_transaction) or (plain is not None and plain.in_transaction)

    def lean_reads(self) -> LeanPostgresReads:
        """This store's reads for a tick: libpq and the lean readers (psycopg, pydantic only on doubt)."""
        return LeanPostgresReads(self)

    def close(self) -> None:
        """Close this store's connections."""
        self.lean_link.close()
        if self._session is not None:
            self._session.connections.close()

    def _rows(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        """The statement's rows over psycopg (in the thread's transaction if it has one)."""
        return self.tx.read(lambda c: c.execute(sql, params).fetchall())  # type: ignore[arg-type]

    # -- how a record becomes a row (`lean_store.LeanSettlePostgresStore` takes lean objects)
    def _json(self, record: Any) -> str:
        """A document's row: `model_dump_json()`, the compact JSON the file store indents."""
        return record.model_dump_json()  # type: ignore[no-any-return]

    def _event_line(self, event: Any) -> str:
        """A ledger row's body, the file store's ledger line."""
        from loopx_core.store.snapshot import event_line

        return event_line(event)

    def _history_line(self, entry: Any) -> str:
        """A history row's entry, the file store's history line."""
        from loopx_core.store.snapshot import history_line

        return history_line(entry)

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
        """Check the schema once per store: newer refused (exit 8), older brought forward; the
        latest confirmed over libpq in one statement, anything else judged by psycopg."""
        if self._schema_checked:
            return
        if not self._pooled and not self.in_transaction:
            from loopx_core.store.postgres.lean_protocol import Doubt

            try:
                if self.lean_link.rows(VERSION, ()) == [(LATEST,)]:
                    self._schema_checked = True
                    return
            except Doubt:  # no table, another version, no libpq: psycopg's path says what
                pass
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
        from loopx_core.models import Registry

        self.migrate_schema()
        empty = Registry(schema_version=SCHEMA_VERSION).model_dump_json()

        def create(conn: Conn) -> bool:
            cursor = conn.execute(
                "INSERT INTO loopx_registry (doc) VALUES (%s::json) ON CONFLICT DO NOTHING", (empty,)
            )
            return cursor.rowcount == 1

        return self.session.write([REGISTRY_LOCK], create)

    # -- registry ----------------------------------------------------------------------
    def read_registry(self) -> Registry:
        """The registry, validated."""
        return self._registry(lean=self._lean_docs)

    def update_registry(self, change: Callable[[Registry], T]) -> T:
        """Apply `change` to the registry under its lock, in one transaction."""
        self._ready()

        def body(conn: Conn) -> T:
            registry = self.read_registry()
            result = change(registry)
            race_window()
            conn.execute("UPDATE loopx_registry SET doc = %s::json", (self._json(registry),))
            return result

        return self.tx.write([REGISTRY_LOCK], body)

    # -- goal state --------------------------------------------------------------------
    def read_goal(self, goal_id: str) -> GoalState:
        """A goal's state, validated."""
        return self._goal(goal_id, lean=self._lean_docs)

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

        self.tx.write([goal_key(state.goal_id)], body)

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

        return self.tx.write([goal_key(goal_id)], body)

    def goal_lock(self, goal_id: str) -> AbstractContextManager[None]:
        """The goal's lock: one transaction for the block, re-entrant in the thread."""
        key = goal_key(goal_id)
        self._ready()
        return self.tx.locked(key)

    # -- scheduler ---------------------------------------------------------------------
    def read_scheduler(self, goal_id: str) -> SchedulerState:
        """The goal's scheduler state, validated (empty if no host reported yet)."""
        return self._scheduler(goal_id, lean=self._lean_docs)

    def write_scheduler(self, state: SchedulerState) -> None:
        """Write the goal's scheduler state (goal lock held)."""
        self._ready()
        self.tx.write(
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
        return self._journal(goal_id, turn_key, lean=self._lean_docs)

    def has_journal(self, goal_id: str, turn_key: str) -> bool:
        """True when the turn has a journal (open or a tombstone)."""
        check_turn_key(turn_key)
        self._ready()
        sql = "SELECT 1 FROM loopx_journals WHERE goal_id = %s AND turn_key = %s"
        return (
            self.tx.read(lambda c: c.execute(sql, (check_id("goal", goal_id), turn_key)).fetchone())
            is not None
        )

    def write_journal(self, journal: TurnJournal) -> None:
        """Write a journal (goal lock held)."""
        check_turn_key(journal.turn_key)
        self._ready()
        self.tx.write(
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
            what = "a line of the ledger"
            last = parsed(row[0], "LedgerEvent", what, self.label, lean=self._lean_docs) if row else None
            event = build((last.seq + 1) if last else 1, last)
            race_window()
            if last is not None and event.at < last.at:
                event = replaced(event, at=last.at)  # keep the ledger ordered by time

            writes.insert_event(conn, goal_id, event, self._event_line(event))
            return event

        return self.tx.write([goal_key(goal_id)], body)

    def ledger_since(self, goal_id: str, since: datetime) -> list[LedgerEvent]:
        """Ledger events at or after `since`, oldest first."""
        return self._since(goal_id, since, lean=self._lean_docs)

    def ledger_all(self, goal_id: str) -> list[LedgerEvent]:
        """The whole ledger, oldest first."""
        return self._events(
            "SELECT body::text FROM loopx_events WHERE goal_id = %s ORDER BY seq",
            (check_id("goal", goal_id),),
            lean=self._lean_docs,
        )

    # -- receipts (one row each, unique in the database) -------------------------------
    def spend_receipt(self, goal_id: str, turn_instance_id: str) -> LedgerEvent | None:
        """The spend already charged for this turn instance, however long ago (or None)."""
        found = self._events(
            "SELECT body::text FROM loopx_events WHERE goal_id = %s AND kind = 'spend' AND turn_instance_id = %s",
            (check_id("goal", goal_id), turn_instance_id),
            lean=self._lean_docs,
        )
        return found[0] if found else None

    def void_receipt(self, goal_id: str, event_id: str) -> LedgerEvent | None:
        """The void already recorded for `event_id` (or None)."""
        found = self._events(
            "SELECT body::text FROM loopx_events WHERE goal_id = %s AND kind = 'void' AND voids_event_id = %s",
            (check_id("goal", goal_id), event_id),
            lean=self._lean_docs,
        )
        return found[0] if found else None

    # -- runs --------------------------------------------------------------------------
    def run_indexed(self, goal_id: str, run_id: str) -> bool:
        """True when the run history lists `run_id`."""
        self._ready()
        sql = "SELECT 1 FROM loopx_run_index WHERE goal_id = %s AND run_id = %s"
        return (
            self.tx.read(lambda c: c.execute(sql, (check_id("goal", goal_id), run_id)).fetchone()) is not None
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
                writes.append_history(conn, goal_id, entry.run_id, self._history_line(entry))

        self.tx.write([goal_key(goal_id)], body)

    def read_history(self, goal_id: str, *, last: int | None = None) -> list[RunIndexEntry]:
        """The run history (only its `last` entries if given), oldest first."""
        return self._history(goal_id, last, lean=self._lean_docs)

    def read_run(self, goal_id: str, run_id: str) -> dict[str, Any]:
        """One run's full record, as written at its durable writeback."""
        check_id("run", run_id)
        self._ready()
        sql = "SELECT record::text FROM loopx_runs WHERE goal_id = %s AND run_id = %s"
        row = self.tx.read(lambda c: c.execute(sql, (check_id("goal", goal_id), run_id)).fetchone())
        if row is None:
            raise NotFoundError(f"run {run_id!r} not found in goal {goal_id!r}")
        data = jsontext.loads(row[0])
        if not isinstance(data, dict) or data.get("schema_version") != 1:
            where = f"{self.label} (run {run_id})"
            raise SchemaUnsupportedError(f"run record {where} is not a schema 1 run record", path=where)
        return data
