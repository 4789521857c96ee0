"""Inter-process locks on `.loopx/locks/<name>.lock` (POSIX `flock`, with a timeout)."""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from loopx_core.errors import LockTimeoutError

DEFAULT_TIMEOUT_S = 30.0
_held: dict[Path, int] = {}


@contextmanager
def file_lock(path: Path, *, timeout: float | None = None) -> Iterator[None]:
    """Hold an exclusive lock on `path` for the `with` block, or raise `LockTimeoutError`.

    Re-entrant within a process: a nested `with` on a lock this process holds just nests
    (flock would otherwise deadlock on a second open of the same file).
    """
    if path in _held:
        _held[path] += 1
        try:
            yield
        finally:
            _held[path] -= 1
        return
    if timeout is None:
        timeout = float(os.environ.get("LOOPX_LOCK_TIMEOUT", DEFAULT_TIMEOUT_S))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout
        delay = 0.001
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise LockTimeoutError(f"timed out after {timeout:g}s waiting for lock {path}") from None
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
        _held[path] = 1
        try:
            yield
        finally:
            del _held[path]
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
