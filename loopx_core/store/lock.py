"""Locks on `.loopx/locks/<name>.lock`, exclusive across processes and threads (filelock).

One `filelock.FileLock` object per lock file per process (`is_singleton`), with a
per-thread hold count (`thread_local`): a thread re-entering a lock it holds just nests,
while another thread of the same process, or another process, waits for it. The MCP
server runs tool calls in worker threads, so a process-wide "already held" count would
let two threads into one goal's read-modify-write at once.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from loopx_core.errors import LockTimeoutError, StateInvalidError, UsageError

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


@contextmanager
def file_lock(path: Path, *, timeout: float | None = None) -> Iterator[None]:
    """Hold an exclusive lock on `path` for the `with` block, or raise `LockTimeoutError`."""
    import filelock  # kept out of start-up: read-only commands never lock

    if timeout is None:
        timeout = lock_timeout()
    shown = f".loopx/{path.parent.name}/{path.name}"  # never the resolved path: messages must not leak it
    lock = filelock.FileLock(path, is_singleton=True, thread_local=True)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        lock.acquire(timeout=timeout, poll_interval=_POLL_S)
    except filelock.Timeout:
        raise LockTimeoutError(
            f"timed out after {timeout:g}s waiting for the {path.stem!r} lock (another loopx holds it)"
        ) from None
    except OSError as exc:  # a folder, a dangling link or a read-only file where the lock goes
        raise StateInvalidError(
            f"cannot take the {path.stem!r} lock: {shown} is not a lock file LoopX can open "
            f"({exc.strerror or type(exc).__name__}); move it aside",
            path=shown,
        ) from None
    try:
        yield
    finally:
        lock.release()
