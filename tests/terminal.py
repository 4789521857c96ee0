"""`loopx` with a pseudo-terminal as its stdout and stderr: what a person at a terminal sees."""

from __future__ import annotations

import os
import select
import subprocess
from pathlib import Path

from tests.conftest import LOOPX_BIN, T0_ISO


def on_terminal(*args: str, root: Path, columns: int = 120) -> tuple[int, str]:
    """Run `loopx --root ROOT ARGS` with a pseudo-terminal of `columns` as stdout and stderr; (exit, output)."""
    leader, follower = os.openpty()
    env = {**os.environ, "LOOPX_NOW": T0_ISO, "COLUMNS": str(columns), "TERM": "xterm"}
    proc = subprocess.Popen(
        [str(LOOPX_BIN), "--root", str(root), *args],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
        env=env,
    )
    os.close(follower)
    chunks: list[bytes] = []
    while True:
        ready, _, _ = select.select([leader], [], [], 30)
        if not ready:
            proc.kill()
            break
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the follower side closed: the child is done
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    code = proc.wait(timeout=30)
    return code, b"".join(chunks).decode(errors="replace").replace("\r\n", "\n")
