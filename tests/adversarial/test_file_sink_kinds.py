"""Class: a `file://` notice sink whose path is not a regular file fails that delivery, at once.

Observed: `loopx notify add file://pipe` on a FIFO nobody reads, then `loopx notify test`,
hung for ever (the append blocks until a reader opens it); a sink linked to /dev/full or
/dev/zero hung too (its dedup read of the tail never ends). Every command that flushes
notices would hang the same way.

Now the sink's path is checked first: anything there but a regular file (a FIFO, a device, a
folder) is that sink's one-line failure; the other sinks still get the notice, and the
command ends (`notify test`: exit 7, the failing sink named). Each kind of thing, beside a
regular file sink, through the real console script with a deadline.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.builders import demo_project
from tests.conftest import run_loopx


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _link(target: str) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        path.symlink_to(target)

    return make


def _socket(path: Path) -> None:
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(path))
    sock.close()


KINDS: dict[str, Callable[[Path], None]] = {
    "fifo": _fifo,
    "/dev/full": _link("/dev/full"),
    "/dev/zero": _link("/dev/zero"),
    "/dev/urandom": _link("/dev/urandom"),
    "folder": lambda path: path.mkdir(),
    "socket": _socket,
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_sink_that_is_no_regular_file_fails_alone_and_at_once(tmp_path: Path, kind: str) -> None:
    root = demo_project(tmp_path / "project")
    KINDS[kind](root / "odd")
    for url in ("file://odd", "file://good.jsonl"):
        assert run_loopx("notify", "add", url, root=root).exit_code == 0
    result = run_loopx("notify", "test", "-f", "json", root=root, timeout=30)
    assert result.exit_code == 7, result
    report = json.loads(result.stdout)  # one document: the results (the error is stderr's line)
    assert "did not take the test notice" in result.stderr
    outcome = {r["url"]: (r["ok"], r.get("error")) for r in report["results"]}
    assert outcome["file://good.jsonl"] == (True, None), outcome
    assert outcome["file://odd"] == (False, "cannot append to odd: it is not a regular file"), outcome
    assert len((root / "good.jsonl").read_bytes().splitlines()) == 1
    assert "Traceback" not in result.stderr and str(tmp_path) not in result.stdout + result.stderr
