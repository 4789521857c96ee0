"""A tick's reads of the PostgreSQL store with neither pydantic nor psycopg.

`LeanPostgresReads` reads the rows a tick needs through a lean transport (`wire`, the
protocol itself over a unix socket, else `libpq`; one connection per store and thread that
first asked) and parses them with the generated lean
readers. Whenever the lean transport is in doubt (no libpq, a connection or a statement that
fails, a schema that is not the latest, a pooled store, a read inside a transaction) it asks
the store's own psycopg path for that read and every later one, so each error and exit code a
user sees is exactly the psycopg path's, retries included.
"""

from __future__ import annotations

from _thread import get_ident

from loopx_core.errors import LoopxError
from loopx_core.ids import check_id
from loopx_core.store.postgres.reads import GOAL, REGISTRY, SCHEDULER, DocumentReads
from loopx_core.store.postgres.schema import LATEST

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on a tick
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Protocol

    from loopx_core.datetimes import datetime
    from loopx_core.store.postgres.libpq import LeanConnection
    from loopx_core.store.postgres.wire import WireConnection

    class TeamStore(Protocol):
        """What the lean reads use of a `PostgresStore` (named structurally: the store module imports this one)."""

        root: Path | str
        label: str
        lean_link: LeanLink
        tick_goal: str | None
        _schema_checked: bool

        @property
        def in_transaction(self) -> bool:
            """True when this thread runs inside a transaction of the store."""

        def _rows(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]: ...

        def _ready(self) -> None: ...


class LeanLink:
    """The lean transport of one store: a connection (`wire.begin`'s) opened on first use, dropped on any doubt."""

    def __init__(self, dsn: str, *, enabled: bool = True) -> None:
        self.dsn = dsn
        self.enabled = enabled
        self._conn: LeanConnection | WireConnection | None = None
        self.thread = get_ident()
        """The thread the link serves (another thread's statements are psycopg's)."""
        self.at_exit = True
        """Close an encrypted session at the interpreter's exit (over TLS or GSS a server logs a
        session that just stops); False where the owner closes it (`choice.TickStart`). A plain
        session (a unix socket, TCP without TLS) is left to the process's exit: the server logs
        nothing for it (its end-of-file is a DEBUG1 message), and an exit handler, even one
        unregistered, costs a hot command its quick exit (cli/entry.py's `_leave`)."""
        self._registered = False

    def connection(self) -> LeanConnection | WireConnection:
        """The link's connection (begun now if it has none: `wire.begin`); `Doubt` (and the link
        off for good) when unsure."""
        from loopx_core.store.postgres import wire
        from loopx_core.store.postgres.lean_protocol import Doubt

        if not self.enabled or get_ident() != self.thread:
            raise Doubt("the lean transport is off")
        if self._conn is None:
            try:
                self.adopt(wire.begin(self.dsn))
            except Doubt:
                self.enabled = False
                raise
        return self._conn  # type: ignore[return-value]

    def adopt(self, conn: LeanConnection | WireConnection) -> None:
        """Serve `conn`, a connection `wire.begin` began (here, or before the store was made)."""
        conn.on_ready = self._ready
        self._conn = conn

    def _ready(self, conn: LeanConnection | WireConnection) -> None:
        """The session is up: an encrypted one is closed at exit (see `at_exit`)."""
        if self.at_exit and not self._registered and conn.encrypted():
            import atexit  # a C module: end the session cleanly at exit, as psycopg's finaliser does

            atexit.register(self.close)
            self._registered = True

    def rows(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        """The statement's rows over the lean transport; `Doubt` (and the link off for good) when unsure."""
        from loopx_core.store.postgres.lean_protocol import Doubt

        conn = self.connection()
        try:
            return conn.rows(sql, params)
        except Doubt:
            self.close()
            self.enabled = False
            raise

    def close(self) -> None:
        """Close the connection (the link may open a new one)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()  # the exit handler, if any, stays: Python 3.11 counts it even once unregistered


TICK_DOCUMENTS = (
    "SELECT (SELECT version FROM loopx_schema), (SELECT doc::text FROM loopx_registry), "
    "(SELECT doc::text FROM loopx_goals WHERE goal_id = %s), "
    "(SELECT doc::text FROM loopx_scheduler WHERE goal_id = %s)"
)
"""A tick's first statement: what `VERSION`, `REGISTRY`, `GOAL` and `SCHEDULER` select, in one
row (each table holds at most one such row: singletons and primary keys)."""


class LeanPostgresReads(DocumentReads):
    """The reads of a `PostgresStore` a tick (and a host's hooks) make, through libpq and the lean readers.

    Same rows, same errors as the store's own reads; only the transport and the parsing differ
    (psycopg and pydantic settle any doubt). Read-only, as `loopx_core.store.lean.LeanFileStore`
    is for the file store.
    """

    def __init__(self, store: TeamStore) -> None:
        self.store = store
        self.root = store.root
        self.label = store.label
        self._prefetched: dict[tuple[str, tuple[Any, ...]], list[tuple[Any, ...]]] = {}

    def _rows(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        """Over libpq when the store is not inside a transaction and the link is sure, else psycopg
        (a document the first statement brought is taken from there, once)."""
        from loopx_core.store.postgres.lean_protocol import Doubt

        if not self.store.in_transaction:
            found = self._prefetched.pop((sql, params), None)
            if found is not None:
                return found
            try:
                return self.store.lean_link.rows(sql, params)
            except Doubt:
                pass
        return self.store._rows(sql, params)

    def _ready(self) -> None:
        """The store's schema check; for a tick that named its goal (`choice.TickStart`), one
        statement confirms the latest schema and brings the registry, the goal's state and its
        scheduler state with it (one snapshot, one round trip instead of four)."""
        store = self.store
        if not store._schema_checked and store.tick_goal is not None and not store.in_transaction:
            self._prefetch(store.tick_goal)
        store._ready()

    def _prefetch(self, goal_id: str) -> None:
        """`TICK_DOCUMENTS` over libpq; any doubt, or a schema not the latest, leaves it to `_ready`."""
        from loopx_core.store.postgres.lean_protocol import Doubt

        try:
            goal = check_id("goal", goal_id)
            found = self.store.lean_link.rows(TICK_DOCUMENTS, (goal, goal))
        except (LoopxError, Doubt):
            return
        if len(found) != 1 or found[0][0] != LATEST:
            return
        _, registry, state, scheduler = found[0]
        for key, doc in (
            ((REGISTRY, ()), registry),
            ((GOAL, (goal,)), state),
            ((SCHEDULER, (goal,)), scheduler),
        ):
            self._prefetched[key] = [] if doc is None else [(doc,)]
        self.store._schema_checked = True

    def read_registry(self) -> Any:
        """The registry (lean)."""
        return self._registry(lean=True)

    def read_goal(self, goal_id: str) -> Any:
        """A goal's state (lean)."""
        return self._goal(goal_id, lean=True)

    def read_journal(self, goal_id: str, turn_key: str) -> Any:
        """A turn journal (lean)."""
        return self._journal(goal_id, turn_key, lean=True)

    def read_scheduler(self, goal_id: str) -> Any:
        """The goal's scheduler state (lean; empty if no host reported yet)."""
        return self._scheduler(goal_id, lean=True)

    def ledger_since(self, goal_id: str, since: datetime) -> list[Any]:
        """Ledger events (lean) at or after `since`, oldest first."""
        return self._since(goal_id, since, lean=True)

    def read_history(self, goal_id: str, *, last: int | None = None) -> list[Any]:
        """The run history (lean; only its `last` entries if given), oldest first."""
        return self._history(goal_id, last, lean=True)
