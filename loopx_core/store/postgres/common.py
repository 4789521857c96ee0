"""What both of the store's transports share, without importing psycopg: how a connection is
opened (its libpq options), the advisory lock statement, and the error a store that cannot be
reached is."""

from __future__ import annotations

import os
import sys

from loopx_core.errors import LockTimeoutError

APPLICATION_NAME = "loopx"
CONNECT_TIMEOUT_S = 10
LIBPQ_OPTIONS = {
    "application_name": APPLICATION_NAME,
    "connect_timeout": str(CONNECT_TIMEOUT_S),
    "client_encoding": "UTF8",
}
"""The libpq options every connection of the store has (they win over the DSN's own and the
environment's: a `PGCLIENTENCODING` that cannot hold every character would fail a read)."""
LEAN_CONNECT_TIMEOUT_S = 2
"""How long the lean transport waits for a server (libpq's least): a healthy one answers in
milliseconds, and one that does not is psycopg's to wait for (its retries, its error), so an
unreachable server costs a tick 2 s more than before, not twice the 10 s."""
LEAN_LIBPQ_OPTIONS = {**LIBPQ_OPTIONS, "connect_timeout": str(LEAN_CONNECT_TIMEOUT_S)}
"""The options of a lean transport's libpq connection: the store's, with the short timeout."""


def lock_statement(keys: list[str]) -> str:
    """Advisory transaction locks on `keys` (checked ids only), hashed with the current schema."""
    calls = ", ".join(
        f"pg_advisory_xact_lock(hashtextextended(current_schema() || '{key}', 0))" for key in keys
    )
    return f"SELECT {calls}"


class StoreUnavailableError(LockTimeoutError):
    """The database could not be reached, or the connection broke where no retry is safe (exit 6)."""

    code = "store_unavailable"


def installed(name: str) -> bool:
    """True when the package `name` is installed on `sys.path` (found without importing it): the
    lean transports serve a store only where psycopg, which settles their every doubt, is."""
    return any(entry and os.path.isdir(os.path.join(entry, name)) for entry in sys.path)
