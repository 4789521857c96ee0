"""Connections, transactions, per-goal locks and retries for the PostgreSQL store, over psycopg.

Serialisation is by transaction: a write runs in one transaction holding a transaction-scoped
advisory lock per goal (and one for the registry), so it is exclusive across threads,
processes and machines, and ends with its transaction. A thread that already runs a
transaction (inside `goal_lock`, or a change that calls the store again) joins it: the lock is
re-entrant in the thread and everything inside commits or rolls back together.

Retries: a connection refused (the server restarting) is retried until the lock timeout; a
top-level transaction that fails before its COMMIT was sent (connection lost, deadlock,
serialisation failure, a unique constraint a racing machine won) rolled back entirely and is
run again from its first read. A connection lost during COMMIT, or inside a caller's
`goal_lock` block, cannot be replayed here: it is a `StoreUnavailableError` (exit 6) and the
caller retries the command (settlement is idempotent: a retry never charges twice).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

import psycopg

from loopx_core.errors import LoopxError
from loopx_core.store.lock import lock_timeout
from loopx_core.store.postgres.common import LIBPQ_OPTIONS, StoreUnavailableError, lock_statement
from loopx_core.store.postgres.failures import clean, commit_rolled_back, mapped, operational_loss, retryable

T = TypeVar("T")
__all__ = ["Connections", "Session", "StoreUnavailableError", "clean"]

_RETRY_PAUSE_S = (0.02, 0.05, 0.1, 0.2, 0.5, 1.0)
FIRST_CONNECT_RETRY_S = 3.0
"""How long a process that never reached the server retries connecting."""


@dataclass
class _Local(threading.local):
    """The thread's open transaction: its connection and the advisory locks it holds."""

    conn: psycopg.Connection[Any] | None = None
    locks: set[str] = field(default_factory=set)


class Connections:
    """Where connections come from: one kept per thread, or a pool shared by the threads."""

    def __init__(self, dsn: str, shown: str, *, pooled: bool = False) -> None:
        self.dsn = dsn
        self.shown = shown
        self._kept = threading.local()
        self._reached = False
        self._pool: Any = None
        if pooled:
            from psycopg_pool import ConnectionPool

            self._pool = ConnectionPool(
                dsn,
                min_size=1,
                max_size=8,
                kwargs=_connect_options(),
                open=False,
                check=ConnectionPool.check_connection,
                name="loopx",
            )

    def acquire(self, deadline: float) -> psycopg.Connection[Any]:
        """A live connection in autocommit mode; a refused connect is retried until `deadline`.

        Until this process has reached the server once, a refusal is retried only briefly: a
        wrong DSN fails in seconds, while a server restarting under a running process is
        waited for.
        """
        if not self._reached:
            deadline = min(deadline, time.monotonic() + FIRST_CONNECT_RETRY_S)
        attempt = 0
        while True:
            try:
                conn = self._acquire()
                self._reached = True
                return conn
            except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
                if time.monotonic() >= deadline:
                    raise StoreUnavailableError(
                        f"cannot reach the store {self.shown}: {clean(str(exc))}", None
                    ) from None
            except Exception as exc:  # the pool's own timeout
                if type(exc).__name__ != "PoolTimeout" or time.monotonic() >= deadline:
                    raise StoreUnavailableError(
                        f"cannot reach the store {self.shown}: {clean(str(exc))}", None
                    ) from None
            time.sleep(_RETRY_PAUSE_S[min(attempt, len(_RETRY_PAUSE_S) - 1)])
            attempt += 1

    def _acquire(self) -> psycopg.Connection[Any]:
        if self._pool is not None:
            if self._pool.closed:
                self._pool.open(wait=False)
            return self._pool.getconn(timeout=max(1.0, lock_timeout()))  # type: ignore[no-any-return]
        conn = getattr(self._kept, "conn", None)
        if conn is None or conn.closed or conn.broken:
            conn = psycopg.connect(self.dsn, **_connect_options())
            self._kept.conn = conn
        return conn

    def release(self, conn: psycopg.Connection[Any]) -> None:
        """Give the connection back; a broken one is closed and forgotten."""
        broken = conn.closed or conn.broken
        if self._pool is not None:
            if broken:
                conn.close()
            self._pool.putconn(conn)
            return
        if broken:
            conn.close()
            self._kept.conn = None

    def close(self) -> None:
        """Close the pool (or this thread's connection)."""
        if self._pool is not None:
            self._pool.close()
            return
        conn = getattr(self._kept, "conn", None)
        if conn is not None:
            conn.close()
            self._kept.conn = None


def _connect_options() -> dict[str, Any]:
    return {"autocommit": True, **LIBPQ_OPTIONS}


class Session:
    """Runs store operations in transactions with per-goal advisory locks, retrying what is safe."""

    def __init__(self, connections: Connections) -> None:
        self.connections = connections
        self._local = _Local()

    @property
    def in_transaction(self) -> bool:
        """True when this thread runs inside a transaction of this store."""
        return self._local.conn is not None

    # -- the two ways in ---------------------------------------------------------------
    def read(self, body: Callable[[psycopg.Connection[Any]], T]) -> T:
        """Run a read: in the thread's transaction if any, else on its own (retried freely)."""
        return self.write((), body) if self.in_transaction else self._run(None, body)

    def write(self, locks: tuple[str, ...] | list[str], body: Callable[[psycopg.Connection[Any]], T]) -> T:
        """Run `body` in a transaction holding the advisory `locks` (joined if one is open)."""
        local = self._local
        if local.conn is not None:
            try:
                self._take(local.conn, [k for k in locks if k not in local.locks])
                return body(local.conn)
            except psycopg.Error as exc:
                raise self._mapped(exc, rolled_back=True) from None
        return self._run(list(locks), body)

    @contextmanager
    def locked(self, key: str) -> Iterator[None]:
        """Hold `key`'s advisory lock for the block, in one transaction (re-entrant in the thread)."""
        local = self._local
        if local.conn is not None:
            self.write([key], lambda conn: None)
            yield
            return
        conn = self._begun(key)
        try:
            local.conn = conn
            try:
                yield
            finally:
                local.conn, local.locks = None, set()
            try:
                _commit(conn, self.connections.shown)
            except psycopg.Error as exc:
                raise self._mapped(exc, committing=True) from None
        except BaseException:
            _rollback(conn)
            raise
        finally:
            self.connections.release(conn)

    # -- machinery ---------------------------------------------------------------------
    def _begun(self, key: str) -> psycopg.Connection[Any]:
        """A connection in a new transaction holding `key`; nothing done yet, so failures retry."""
        deadline = time.monotonic() + lock_timeout()
        attempt = 0
        while True:
            conn = self.connections.acquire(deadline)
            try:
                self._begin(conn, [key])
                return conn
            except psycopg.Error as exc:
                _rollback(conn)
                self.connections.release(conn)
                if not (_retryable(exc) and time.monotonic() < deadline):
                    raise self._mapped(exc, rolled_back=True) from None
            except BaseException:
                _rollback(conn)
                self.connections.release(conn)
                raise
            time.sleep(_RETRY_PAUSE_S[min(attempt, len(_RETRY_PAUSE_S) - 1)])
            attempt += 1

    def _run(self, locks: list[str] | None, body: Callable[[psycopg.Connection[Any]], T]) -> T:
        deadline = time.monotonic() + lock_timeout()
        attempt = 0
        while True:
            conn = self.connections.acquire(deadline)
            committing = False
            try:
                if locks is None:
                    result = body(conn)
                else:
                    self._begin(conn, locks)
                    self._local.conn = conn
                    try:
                        result = body(conn)
                    finally:
                        self._local.conn, self._local.locks = None, set()
                    committing = True
                    _commit(conn, self.connections.shown)
                return result
            except psycopg.Error as exc:
                _rollback(conn)
                if not committing and _retryable(exc) and time.monotonic() < deadline:
                    time.sleep(_RETRY_PAUSE_S[min(attempt, len(_RETRY_PAUSE_S) - 1)])
                    attempt += 1
                    continue
                raise self._mapped(exc, committing=committing) from None
            except BaseException:
                _rollback(conn)
                raise
            finally:
                self.connections.release(conn)

    def _begin(self, conn: psycopg.Connection[Any], locks: list[str]) -> None:
        timeout_ms = max(1, round(lock_timeout() * 1000))  # 0 would mean "wait forever"
        conn.execute(f"BEGIN; SET LOCAL lock_timeout = {timeout_ms}")
        self._local.locks = set()
        self._take(conn, locks)

    def _take(self, conn: psycopg.Connection[Any], keys: list[str]) -> None:
        if keys:
            conn.execute(lock_statement(keys))
            self._local.locks.update(keys)

    def _mapped(
        self, exc: psycopg.Error, *, committing: bool = False, rolled_back: bool = False
    ) -> LoopxError:
        """The database error as LoopX's typed error (failures.mapped, by its SQLSTATE)."""
        detail = getattr(getattr(exc, "diag", None), "message_primary", None) or str(exc)
        where = self.connections.shown
        return mapped(exc.sqlstate, detail, where, lost=_connection_lost(exc), committing=committing)


def _retryable(exc: psycopg.Error) -> bool:
    """Failures after which the whole transaction rolled back and may simply run again."""
    return retryable(exc.sqlstate, lost=_connection_lost(exc))


def _connection_lost(exc: psycopg.Error) -> bool:
    """The connection broke (server gone, backend terminated, network): the transaction is lost."""
    if isinstance(exc, psycopg.InterfaceError):
        return True
    return isinstance(exc, psycopg.OperationalError) and operational_loss(exc.sqlstate)


def _commit(conn: psycopg.Connection[Any], where: str) -> None:
    """COMMIT, or a `ConflictError` when the server rolled back instead (the transaction had failed)."""
    if conn.execute("COMMIT").statusmessage == "ROLLBACK":
        raise commit_rolled_back(where)


def _rollback(conn: psycopg.Connection[Any]) -> None:
    """Roll back whatever the connection has open; a broken connection needs nothing."""
    if conn.closed or conn.broken:
        return
    try:
        if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            conn.execute("ROLLBACK")
    except psycopg.Error:
        conn.close()
