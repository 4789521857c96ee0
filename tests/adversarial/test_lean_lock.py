"""Class: the settlement store's lock (`flock_lock`, no filelock) is the same lock as filelock's.

Both are `flock` on `.loopx/locks/<name>.lock`: a process holding one keeps the other out
(real processes, both ways), a thread holding either nests into the other, another thread
waits, and whatever sits where the lock file goes gives the same one line either way.
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from loopx_core.errors import LockTimeoutError, LoopxError, UsageError
from loopx_core.store.lock import file_lock, flock_lock

REPO = Path(__file__).resolve().parents[2]
LOCKS = {"filelock": file_lock, "flock": flock_lock}
HOLDER = """\
import sys
from pathlib import Path
from loopx_core.store.lock import file_lock, flock_lock
lock = {"filelock": file_lock, "flock": flock_lock}[sys.argv[1]]
with lock(Path(sys.argv[2])):
    print("held", flush=True)
    sys.stdin.read()
print("released", flush=True)
"""


@contextmanager
def held_elsewhere(kind: str, path: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding `path` through the lock `kind` until the block ends."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, kind, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    assert proc.stdout is not None and proc.stdin is not None
    try:
        assert proc.stdout.readline() == "held\n"
        yield proc
    finally:
        proc.stdin.close()
        proc.wait(20)


def outcome(lock: Callable[..., object], path: Path, **kwargs: float) -> str:
    """What taking the lock did: `held`, or the error's class and line."""
    try:
        with lock(path, **kwargs):  # type: ignore[attr-defined]
            return "held"
    except LoopxError as error:
        return f"{type(error).__name__}: {error.message} [{error.exit_code}]"


@pytest.mark.parametrize("holder", sorted(LOCKS))
@pytest.mark.parametrize("taker", sorted(LOCKS))
def test_a_process_holding_either_lock_keeps_the_other_out(tmp_path: Path, holder: str, taker: str) -> None:
    path = tmp_path / ".loopx" / "locks" / "g.lock"
    with held_elsewhere(holder, path):
        refused = outcome(LOCKS[taker], path, timeout=0.2)
    assert refused == (
        "LockTimeoutError: timed out after 0.2s waiting for the 'g' lock (another loopx holds it) [6]"
    )
    assert outcome(LOCKS[taker], path, timeout=0.2) == "held"  # released with the process


def test_the_timeout_line_is_the_same_through_both(tmp_path: Path) -> None:
    path = tmp_path / ".loopx" / "locks" / "goal-1.lock"
    lines = set()
    for holder in sorted(LOCKS):
        with held_elsewhere(holder, path):
            lines |= {outcome(lock, path, timeout=0.1) for lock in LOCKS.values()}
    assert len(lines) == 1, lines
    [line] = lines
    assert line.startswith("LockTimeoutError:") and str(tmp_path) not in line


@pytest.mark.parametrize("outer", sorted(LOCKS))
@pytest.mark.parametrize("inner", sorted(LOCKS))
def test_a_thread_nests_into_its_own_hold_through_either(tmp_path: Path, outer: str, inner: str) -> None:
    path = tmp_path / "locks" / "g.lock"
    with LOCKS[outer](path, timeout=0.2), LOCKS[inner](path, timeout=0.2), LOCKS[outer](path, timeout=0.2):
        for kind in sorted(LOCKS):  # another thread of this process waits, through either lock
            results: list[str] = []
            thread = threading.Thread(
                target=lambda k=kind, out=results: out.append(outcome(LOCKS[k], path, timeout=0.1))
            )
            thread.start()
            thread.join(10)
            assert results and results[0].startswith("LockTimeoutError"), (kind, results)
    for kind in sorted(LOCKS):  # all holds gone: free for everyone
        assert outcome(LOCKS[kind], path, timeout=0) == "held"


def test_threads_through_both_locks_never_overlap(tmp_path: Path) -> None:
    path = tmp_path / "locks" / "g.lock"
    inside, most, total = [0], [0], [0]
    barrier = threading.Barrier(8)

    def work(n: int) -> None:
        lock = LOCKS[sorted(LOCKS)[n % 2]]
        other = LOCKS[sorted(LOCKS)[(n + 1) % 2]]
        barrier.wait()
        for _ in range(15):
            with lock(path), other(path):
                inside[0] += 1
                most[0] = max(most[0], inside[0])
                value = total[0]
                threading.Event().wait(0.0002)
                total[0] = value + 1
                inside[0] -= 1

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert (most[0], total[0]) == (1, 8 * 15)


def _damage(locks: Path, path: Path, how: str) -> None:
    locks.mkdir(parents=True, exist_ok=True)
    if how == "locks is a file":
        locks.rmdir()
        locks.write_text("not a folder")
    elif how == "folder":
        path.mkdir()
    elif how == "dangling link":
        os.symlink(locks / "nowhere" / "x", path)
    elif how == "link loop":
        os.symlink(path, path)
    elif how == "link to a file":
        (locks / "real").write_text("")
        os.symlink(locks / "real", path)
    elif how == "fifo":
        os.mkfifo(path)
    elif how == "socket":
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        server.close()
    elif how == "a file with content":
        path.write_text("someone's notes")
    elif how == "read-only file":
        path.write_text("")
        path.chmod(0o444)
    elif how == "no locks folder":
        locks.rmdir()


DAMAGES = (
    "locks is a file",
    "folder",
    "dangling link",
    "link loop",
    "link to a file",
    "fifo",
    "socket",
    "a file with content",
    "read-only file",
    "no locks folder",
)


@pytest.mark.parametrize("how", DAMAGES)
def test_whatever_sits_at_the_lock_path_both_answer_alike(tmp_path: Path, how: str) -> None:
    answers = {}
    for kind, lock in sorted(LOCKS.items()):
        locks = tmp_path / kind / ".loopx" / "locks"
        path = locks / "g.lock"
        _damage(locks, path, how)
        answers[kind] = outcome(lock, path, timeout=0.1).replace(str(tmp_path / kind), "<root>")
        assert str(tmp_path) not in answers[kind]
    assert answers["filelock"] == answers["flock"], answers


def test_a_new_lock_file_is_the_same_file_either_way(tmp_path: Path) -> None:
    made = {}
    for kind, lock in sorted(LOCKS.items()):
        path = tmp_path / kind / "locks" / "g.lock"
        with lock(path):
            pass
        info = path.stat()
        made[kind] = (stat.S_IMODE(info.st_mode), info.st_size, stat.S_ISREG(info.st_mode))
        assert path.exists()  # kept on release, so every waiter locks the same file
    assert made["filelock"] == made["flock"], made


@pytest.mark.parametrize("raw", ["abc", "nan", "inf", "-1", "1e9"])
def test_a_bad_lock_timeout_is_the_same_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, raw: str
) -> None:
    monkeypatch.setenv("LOOPX_LOCK_TIMEOUT", raw)
    for lock in LOCKS.values():
        with pytest.raises(UsageError, match="LOOPX_LOCK_TIMEOUT"), lock(tmp_path / "x.lock"):
            pass


def test_an_error_inside_the_block_releases_the_lock(tmp_path: Path) -> None:
    path = tmp_path / "locks" / "g.lock"
    with pytest.raises(RuntimeError), flock_lock(path):
        raise RuntimeError("inside")
    with held_elsewhere("filelock", path):  # the other process got it: nothing was left held here
        assert outcome(flock_lock, path, timeout=0.1).startswith(LockTimeoutError.__name__)
