"""How a database failure becomes LoopX's typed error, by its SQLSTATE.

`mapped` reads what a failure says: its SQLSTATE, its primary message, and whether the
connection was lost (an `InterfaceError`, or an `OperationalError` with no SQLSTATE or one of
classes 08 and 57P).
"""

from __future__ import annotations

import re

from loopx_core.errors import ConflictError, LockTimeoutError, LoopxError, RefusedError, StateInvalidError
from loopx_core.store.lock import lock_timeout
from loopx_core.store.postgres.common import RETRY, StoreUnavailableError

LOCK_NOT_AVAILABLE = "55P03"
INSUFFICIENT_PRIVILEGE = "42501"
RACES = frozenset(("23505", "40P01", "40001"))
"""unique_violation, deadlock_detected, serialization_failure: a concurrent change won."""
_PATH_IN_MESSAGE = re.compile(r'"/[^"]*"|(?<![\w/])/[\w./-]+')
"""A local path in a server message."""


def clean(message: str) -> str:
    """A server or libpq message on one line, with local paths (socket folders) removed."""
    first = (message or "").strip().splitlines()[0] if (message or "").strip() else "no detail"
    return _PATH_IN_MESSAGE.sub("(local socket)", first)[:200]


def operational_loss(sqlstate: str | None) -> bool:
    """An `OperationalError`'s SQLSTATE that means the connection broke (none, 08xxx, 57Pxx)."""
    return sqlstate is None or sqlstate.startswith(("08", "57P"))


def retryable(sqlstate: str | None, *, lost: bool) -> bool:
    """Failures after which the whole transaction rolled back and may simply run again."""
    return sqlstate in RACES or lost


def mapped(sqlstate: str | None, detail: str, where: str, *, lost: bool, committing: bool) -> LoopxError:
    """The database failure as LoopX's typed error (one line, no local path, no credential)."""
    detail = clean(detail)
    if sqlstate == LOCK_NOT_AVAILABLE:
        return LockTimeoutError(
            f"timed out after {lock_timeout():g}s waiting for a goal lock in {where} (another loopx holds it)"
        )
    if lost:
        if committing:
            return StoreUnavailableError(
                f"lost the connection to {where} while committing: the change may or may not be saved",
                f"{RETRY} (settlement retries never charge twice)",
            )
        return StoreUnavailableError(f"lost the connection to {where}: nothing of this change was saved")
    if sqlstate == INSUFFICIENT_PRIVILEGE:
        return RefusedError(
            f"the database role may not do this in {where}: {detail} (docs/team.md lists the grants)",
            code="store_permission",
        )
    if sqlstate in RACES:
        return ConflictError(f"a concurrent change won in {where}; nothing was saved: retry ({detail})")
    return StateInvalidError(f"the store {where} refused the change: {detail}", code="store_error")


def commit_rolled_back(where: str) -> ConflictError:
    """COMMIT answered ROLLBACK: the transaction had failed, nothing of it was saved."""
    return ConflictError(f"a statement failed inside a change to {where}; nothing of it was saved: retry")
