"""Locks on `.loopx/locks/<name>.lock`, exclusive across processes and threads (filelock).

One `FileLock` per lock file and process (`is_singleton`), with its state kept per thread
(`thread_local`): a thread re-entering a lock it holds nests, another thread or another process
waits. The MCP server runs tool calls in worker threads, so a process-wide "already held" count
would let two threads into one goal's read-modify-write at once. A lock held past the timeout
is one `LockTimeoutError` line; a path that cannot be a lock file one `StateInvalidError` line.
"""

from __future__ import annotations

import math
import os
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from loopx_core.errors import LockTimeoutError, StateInvalidError, UsageError

if TYPE_CHECKING:
    from collections.abc import Iterator

DEFAULT_TIMEOUT_S = 30.0
MAX_TIMEOUT_S = 3600.0
_POLL_S = 0.002


def lock_timeout() -> float:
    """`LOOPX_LOCK_TIMEOUT` in seconds (default 30): a finite number from 0 to 3600."""
    raw = os.environ.get("LOOPX_LOCK_TIMEOUT")
    if raw is None or not raw.strip():
        return DEFAULT_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (0 <= value <= MAX_TIMEOUT_S):  # also refuses NaN
        raise UsageError(f"LOOPX_LOCK_TIMEOUT must be a number of seconds from 0 to {MAX_TIMEOUT_S:g}")
    return value


def timed_out(path: Path | str, timeout: float) -> LockTimeoutError:
    """The error for a lock another holder kept for the whole `timeout`."""
    return LockTimeoutError(
        f"timed out after {timeout:g}s waiting for the {Path(path).stem!r} lock (another loopx holds it)"
    )


def unusable(path: Path | str, exc: OSError) -> StateInvalidError:
    """The error for a lock path that is no lock file (a folder, a dangling link, ...)."""
    where = Path(path)
    shown = f".loopx/{where.parent.name}/{where.name}"  # never the resolved path
    if isinstance(exc, PermissionError):  # a lock file, or its folder, this user may not open
        return StateInvalidError(
            f"cannot take the {where.stem!r} lock: {shown} cannot be opened ({exc.strerror}); "
            "this user needs read and write access to .loopx/ and everything in it",
            path=shown,
        )
    return StateInvalidError(
        f"cannot take the {where.stem!r} lock: {shown} is not a lock file LoopX can open "
        f"({exc.strerror or type(exc).__name__}); move it aside",
        path=shown,
    )


@contextmanager
def file_lock(path: Path | str, *, timeout: float | None = None) -> Iterator[None]:
    """Hold an exclusive lock on `path` for the `with` block, or raise `LockTimeoutError`."""
    import filelock  # read-only commands never lock: they never load it

    wait = lock_timeout() if timeout is None else timeout
    lock = filelock.FileLock(path, is_singleton=True, thread_local=True)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        lock.acquire(timeout=wait, poll_interval=_POLL_S)
    except filelock.Timeout:
        raise timed_out(path, wait) from None
    except OSError as exc:  # a folder, a dangling link or a read-only file where the lock goes
        raise unusable(path, exc) from None
    try:
        yield
    finally:
        lock.release()
