"""What the store's modules share: the libpq options of every connection, the advisory lock
statement, and the error a store that cannot be reached is."""

from __future__ import annotations

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


def lock_statement(keys: list[str]) -> str:
    """Advisory transaction locks on `keys` (checked ids only), hashed with the current schema."""
    calls = ", ".join(
        f"pg_advisory_xact_lock(hashtextextended(current_schema() || '{key}', 0))" for key in keys
    )
    return f"SELECT {calls}"


RETRY = "retry the command"
"""The advice a lost connection ends with, unless the caller knows a better one."""


class StoreUnavailableError(LockTimeoutError):
    """The database could not be reached, or the connection broke where no retry is safe (exit 6).

    `what` is what happened; the message adds the advice (`RETRY` unless told otherwise), so a
    caller that knows the command that works now (the turn driver: `--resume`) gives its own."""

    code = "store_unavailable"

    def __init__(self, what: str, advice: str | None = RETRY) -> None:
        super().__init__(f"{what}; {advice}" if advice else what)
        self.what = what
