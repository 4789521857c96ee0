"""Locks on `.loopx/locks/<name>.lock`, exclusive across processes and threads.

Two implementations of one lock, which exclude each other because both are `flock(LOCK_EX)`
on the same file (a lock of the open file description, so two descriptors of one process
exclude each other too):
- `file_lock`: filelock's `FileLock` (one object per lock file per process, `is_singleton`,
  a per-thread hold count, `thread_local`), for every command but the settlement ones;
- `flock_lock`: the same `fcntl.flock` filelock's `UnixFileLock` takes, opened as it opens the
  file (`O_RDWR | O_NOFOLLOW | O_NONBLOCK`, created `0o644`), with no import of filelock
  (5-8 ms a command: it loads asyncio, logging and typing) for the settlement store
  (store/lean_store.py).

A thread re-entering a lock it holds (through either) just nests: both count holds in one
table keyed by the lock file and the thread, so a nested lock never waits for its own
thread. Another thread, or another process, waits. The MCP server runs tool calls in worker
threads, so a process-wide "already held" count would let two threads into one goal's
read-modify-write at once. Either way a held lock times out with the same `LockTimeoutError`
line, and what cannot be a lock file is the same `StateInvalidError` line
(tests/adversarial/test_lean_lock.py).
"""

from __future__ import annotations

import errno
import math
import os
from _thread import get_ident

from loopx_core.errors import LockTimeoutError, StateInvalidError, UsageError
from loopx_core.store.paths import make_folders, name_of, parent_of

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from pathlib import Path
    from types import TracebackType

DEFAULT_TIMEOUT_S = 30.0
MAX_TIMEOUT_S = 3600.0
_POLL_S = 0.002
_MODE = 0o644
"""The mode filelock creates a lock file with on a filesystem with flock (0o666 without group
and other write), before the umask."""

_CONTENTION = (errno.EACCES, errno.EAGAIN, errno.EWOULDBLOCK)
"""What flock answers while another holds the lock (some filesystems say EACCES), as filelock reads it."""

_HELD: dict[tuple[str, int], list[int]] = {}
"""(lock file, thread) -> [holds, descriptor]: the locks each thread holds, by either lock.
The descriptor is -1 where filelock holds the lock (the outermost hold releases it)."""


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


def _stem(path: Path | str) -> str:
    """The lock's name: the file name without its suffix (`Path.stem`)."""
    name = name_of(path)
    dot = name.rfind(".")
    return name[:dot] if 0 < dot < len(name) - 1 else name


def timed_out(path: Path | str, timeout: float) -> LockTimeoutError:
    """The error for a lock another holder kept for the whole `timeout`."""
    return LockTimeoutError(
        f"timed out after {timeout:g}s waiting for the {_stem(path)!r} lock (another loopx holds it)"
    )


def unusable(path: Path | str, exc: OSError) -> StateInvalidError:
    """The error for a lock path that is no lock file (a folder, a dangling link, ...)."""
    shown = f".loopx/{name_of(parent_of(path))}/{name_of(path)}"  # never the resolved path
    return StateInvalidError(
        f"cannot take the {_stem(path)!r} lock: {shown} is not a lock file LoopX can open "
        f"({exc.strerror or type(exc).__name__}); move it aside",
        path=shown,
    )


class _Hold:
    """The `with` block of a lock: nests in the thread's own hold, else takes the lock."""

    __slots__ = ("_key", "_path", "_timeout")

    def __init__(self, path: Path | str, timeout: float | None) -> None:
        self._path = path
        self._timeout = timeout
        self._key = (os.path.abspath(path), get_ident())

    def __enter__(self) -> None:
        held = _HELD.get(self._key)
        if held is not None:
            held[0] += 1
            return
        timeout = lock_timeout() if self._timeout is None else self._timeout
        _HELD[self._key] = [1, self._take(timeout)]

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        held = _HELD[self._key]
        held[0] -= 1
        if held[0] == 0:
            del _HELD[self._key]
            self._release(held[1])

    def _take(self, timeout: float) -> int:
        raise NotImplementedError

    def _release(self, fd: int) -> None:
        raise NotImplementedError


class _FileLockHold(_Hold):
    """A hold taken through filelock."""

    __slots__ = ("_lock",)

    def _take(self, timeout: float) -> int:
        import filelock  # kept out of start-up: read-only commands never lock

        path = self._path
        self._lock = filelock.FileLock(path, is_singleton=True, thread_local=True)
        try:
            make_folders(parent_of(path))
            self._lock.acquire(timeout=timeout, poll_interval=_POLL_S)
        except filelock.Timeout:
            raise timed_out(path, timeout) from None
        except OSError as exc:  # a folder, a dangling link or a read-only file where the lock goes
            raise unusable(path, exc) from None
        return -1

    def _release(self, fd: int) -> None:
        self._lock.release()


class _FlockHold(_Hold):
    """A hold taken with `fcntl.flock` directly (what filelock's `UnixFileLock` does)."""

    __slots__ = ()

    def _take(self, timeout: float) -> int:
        import fcntl
        import time

        path = self._path
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
        deadline = time.monotonic() + timeout
        while True:
            try:
                make_folders(parent_of(path))
                fd = os.open(path, flags, _MODE)
            except OSError as exc:
                raise unusable(path, exc) from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                os.close(fd)
                if exc.errno not in _CONTENTION:  # flock refused: not a file we can lock
                    raise unusable(path, exc) from None
                if time.monotonic() >= deadline:
                    raise timed_out(path, timeout) from None
                time.sleep(_POLL_S)
                continue
            except BaseException:
                os.close(fd)
                raise
            if os.fstat(fd).st_nlink == 0:  # removed while we waited: lock the file now there
                os.close(fd)
                continue
            return fd

    def _release(self, fd: int) -> None:
        import fcntl

        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)


def file_lock(path: Path | str, *, timeout: float | None = None) -> _Hold:
    """Hold an exclusive lock on `path` for the `with` block (filelock), or raise `LockTimeoutError`."""
    return _FileLockHold(path, timeout)


def flock_lock(path: Path | str, *, timeout: float | None = None) -> _Hold:
    """`file_lock` without filelock: the same lock, errors and nesting, with `fcntl.flock`."""
    return _FlockHold(path, timeout)
