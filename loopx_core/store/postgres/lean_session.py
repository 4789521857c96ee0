"""The store's transactions over libpq (ctypes), so a settlement command never imports psycopg.

`LeanSession` runs what `session.Session` runs, statement for statement: `BEGIN; SET LOCAL
lock_timeout`, the per-goal advisory locks, the operation's statements, `COMMIT` (a `ROLLBACK`
answer is the same `ConflictError`), on the store's one lean connection (`LeanLink`, shared
with the tick's reads). Failures map through `failures.mapped` by SQLSTATE, as psycopg's do.

psycopg takes over, for this operation and every later one, where that is safe and the lean
path cannot answer for sure: before anything was committed and outside a caller's
`goal_lock` block, a failure psycopg would retry (a lost connection, a race lost), a
connection that cannot be made, or anything this transport doubts, rolls back and runs the
whole operation again through psycopg, which then retries or says why exactly as it always
did. A failure psycopg would not retry is mapped here (a lock timeout is not waited for
twice); one during COMMIT is what psycopg says then (the change may or may not be saved).
"""

from __future__ import annotations

from _thread import get_ident

from loopx_core.store.lock import lock_timeout
from loopx_core.store.postgres.common import StoreUnavailableError, lock_statement
from loopx_core.store.postgres.failures import commit_rolled_back, mapped, operational_loss, retryable
from loopx_core.store.postgres.lean_protocol import Doubt, Failed

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on a settlement command
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    from loopx_core.errors import LoopxError
    from loopx_core.store.postgres.lean_protocol import Outcome
    from loopx_core.store.postgres.lean_reads import LeanLink
    from loopx_core.store.postgres.libpq import LeanConnection as LibpqConnection
    from loopx_core.store.postgres.session import Session
    from loopx_core.store.postgres.wire import WireConnection

    LeanConnection = LibpqConnection | WireConnection

    T = TypeVar("T")


class Cursor:
    """A statement's result as the store's operations read a psycopg cursor."""

    def __init__(self, outcome: Outcome) -> None:
        self._rows = outcome.rows
        self._next = 0
        self.rowcount = outcome.rowcount
        self.statusmessage = outcome.status

    def fetchone(self) -> tuple[Any, ...] | None:
        """The next row (None after the last)."""
        if self._next >= len(self._rows):
            return None
        self._next += 1
        return self._rows[self._next - 1]

    def fetchall(self) -> list[tuple[Any, ...]]:
        """The rows not fetched yet."""
        rows, self._next = self._rows[self._next :], len(self._rows)
        return rows


class LeanConn:
    """What an operation's body uses of its connection: `execute(sql, params)`, a cursor back."""

    def __init__(self, conn: LeanConnection) -> None:
        self._conn = conn

    def execute(self, sql: str, params: tuple[Any, ...] | list[Any] = ()) -> Cursor:
        """Run one statement (`%s` placeholders, as psycopg's)."""
        return Cursor(self._conn.execute(sql, tuple(params)))


def _lost(failure: Failed) -> bool:
    """What psycopg's `_connection_lost` says of the same failure."""
    return failure.lost if failure.sqlstate is None else operational_loss(failure.sqlstate)


class LeanSession:
    """`session.Session`'s `read`, `write` and `locked` over the store's lean connection."""

    def __init__(
        self, link: LeanLink, where: str, fallback: Callable[[], Session], elsewhere: Callable[[], bool]
    ) -> None:
        self.link = link
        self.where = where
        self._fallback = fallback
        self._elsewhere = elsewhere  # psycopg's session has this thread's transaction open: join it
        self._open: LeanConnection | None = None
        self._locks: set[str] = set()
        self._block = False  # inside a caller's `locked` block: nothing can run again

    @property
    def in_transaction(self) -> bool:
        """True when this thread runs inside a lean transaction of the store."""
        return self._open is not None and get_ident() == self.link.thread

    @property
    def usable(self) -> bool:
        """The lean transport is on, this is its thread (another thread uses psycopg), and no
        psycopg transaction is open in it (a statement inside one must join it)."""
        return self.link.enabled and get_ident() == self.link.thread and not self._elsewhere()

    def _off(self) -> None:
        """psycopg answers from now on (the connection is dropped: a new one would be psycopg's)."""
        self.link.close()
        self.link.enabled = False

    # -- the three ways in ---------------------------------------------------------------
    def read(self, body: Callable[[Any], T]) -> T:
        """Run a read: in the thread's transaction if any, else on its own (psycopg on any failure)."""
        if self.in_transaction:
            return self.write((), body)
        if not self.usable:
            return self._fallback().read(body)
        try:
            return body(LeanConn(self.link.connection()))
        except (Failed, Doubt):
            self._off()
        return self._fallback().read(body)

    def write(self, locks: tuple[str, ...] | list[str], body: Callable[[Any], T]) -> T:
        """Run `body` in a transaction holding the advisory `locks` (joined if one is open)."""
        if self.in_transaction:
            return self._joined(list(locks), body)
        if not self.usable:
            return self._fallback().write(locks, body)
        try:
            conn = self._begin(list(locks))
        except (Failed, Doubt) as failure:
            return self._after(failure, None, lambda: self._fallback().write(locks, body))
        committing = False
        try:
            self._open = conn
            try:
                result = body(LeanConn(conn))
            finally:
                self._open, self._locks = None, set()
            committing = True
            self._commit(conn)
            return result
        except (Failed, Doubt) as failure:
            return self._after(
                failure, conn, lambda: self._fallback().write(locks, body), committing=committing
            )
        except BaseException:
            self._rollback(conn)
            raise

    def locked(self, key: str) -> Locked:
        """Hold `key`'s advisory lock for the block, in one transaction (re-entrant in the thread)."""
        return Locked(self, key)

    # -- machinery -----------------------------------------------------------------------
    def _joined(self, locks: list[str], body: Callable[[Any], T]) -> T:
        """`body` inside the thread's open transaction: a failure is mapped, never run again here."""
        conn = self._open
        assert conn is not None
        try:
            self._take(conn, [k for k in locks if k not in self._locks])
            return body(LeanConn(conn))
        except Failed as failure:
            raise self._mapped(failure) from None
        except Doubt:
            if not self._block:
                raise  # the operation's own `write` rolls back and lets psycopg run it all
            self._off()
            raise StoreUnavailableError(
                f"lost the connection to {self.where}: nothing of this change was saved; retry the command"
            ) from None

    def _after(
        self,
        failure: Failed | Doubt,
        conn: LeanConnection | None,
        again: Callable[[], T],
        *,
        committing: bool = False,
    ) -> T:
        """A top-level operation failed: map it, or (nothing committed, psycopg would retry or the
        lean path is unsure) roll back and let psycopg run it again from its first statement."""
        if conn is not None:
            self._rollback(conn)
        if committing:
            self._off()
            if isinstance(failure, Doubt):
                raise self._mapped(Failed(None, "", lost=True), committing=True) from None
            raise self._mapped(failure, committing=True) from None
        if isinstance(failure, Failed) and not retryable(failure.sqlstate, lost=_lost(failure)):
            raise self._mapped(failure) from None
        self._off()
        return again()

    def _mapped(self, failure: Failed, *, committing: bool = False) -> LoopxError:
        return mapped(
            failure.sqlstate, failure.message, self.where, lost=_lost(failure), committing=committing
        )

    def _begin(self, locks: list[str]) -> LeanConnection:
        """The lean connection in a new transaction holding `locks`."""
        conn = self.link.connection()
        if conn.in_transaction:
            raise Doubt("a transaction already open")
        timeout_ms = max(1, round(lock_timeout() * 1000))  # 0 would mean "wait forever"
        self._locks = set()
        script = f"BEGIN; SET LOCAL lock_timeout = {timeout_ms}"
        try:  # psycopg's two statements in one round trip: the lock's answer (or failure) is the last
            conn.execute(f"{script}; {lock_statement(locks)}" if locks else script, simple=True)
            self._locks.update(locks)
        except BaseException:
            self._rollback(conn)
            raise
        return conn

    def _take(self, conn: LeanConnection, keys: list[str]) -> None:
        if keys:
            conn.execute(lock_statement(keys))
            self._locks.update(keys)

    def _commit(self, conn: LeanConnection) -> None:
        """COMMIT, or a `ConflictError` when the server rolled back instead (the transaction had failed)."""
        if conn.execute("COMMIT", simple=True).status == "ROLLBACK":
            raise commit_rolled_back(self.where)

    def _rollback(self, conn: LeanConnection) -> None:
        """Roll back whatever the connection has open; one that cannot is dropped."""
        if not conn.in_transaction:
            return
        try:
            conn.execute("ROLLBACK", simple=True)
        except (Failed, Doubt):
            self._off()


class Locked:
    """`LeanSession.locked(key)`: the block in one lean transaction holding the key's lock.

    A transaction that cannot begin on the lean path (no connection, a race, a doubt) is
    psycopg's block instead: nothing of the caller's block has run yet.
    """

    def __init__(self, session: LeanSession, key: str) -> None:
        self.session = session
        self.key = key
        self._joined = False
        self._delegate: Any = None
        self._conn: LeanConnection | None = None

    def __enter__(self) -> None:
        session = self.session
        if session.in_transaction:
            session.write([self.key], lambda conn: None)
            self._joined = True
            return
        if session.usable:
            try:
                self._conn = session._begin([self.key])
            except Failed as failure:
                if not retryable(failure.sqlstate, lost=_lost(failure)):
                    raise session._mapped(failure) from None
                session._off()
            except Doubt:
                session._off()
        if self._conn is None:
            self._delegate = session._fallback().locked(self.key)
            self._delegate.__enter__()
            return
        session._open, session._block = self._conn, True

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: Any) -> None:
        if self._delegate is not None:
            self._delegate.__exit__(kind, error, trace)
            return
        if self._joined:
            return
        session, conn = self.session, self._conn
        assert conn is not None
        session._open, session._locks, session._block = None, set(), False
        if kind is not None:
            session._rollback(conn)
            return
        try:
            session._commit(conn)
        except Failed as failure:
            session._rollback(conn)
            session._off()
            raise session._mapped(failure, committing=True) from None
        except Doubt:
            session._rollback(conn)
            session._off()
            raise session._mapped(Failed(None, "", lost=True), committing=True) from None
