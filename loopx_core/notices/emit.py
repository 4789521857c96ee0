"""Queue a notice for the sinks that want it, then start the detached flush; never raises.

Called from the places events happen (a gate opened, a should-run packet that needs the
owner, doctor's liveness check). Nothing is written when no sink wants the notice, and a
damaged sink file only means the notice is not queued (doctor reports the file): a notice
never stops, slows or fails the command that raised it.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

from loopx_core.errors import LoopxError
from loopx_core.models.records import Notice
from loopx_core.notices import outbox
from loopx_core.notices.config import all_sinks, has_sinks

FLUSH_ENV = "LOOPX_NOTIFY_FLUSH"
"""`off` keeps queueing from starting the detached flush (then `loopx notify flush` delivers)."""
LINGER_SECONDS = 120
"""How long the detached flush waits for retries falling due (a brief outage heals unattended)."""


def notice_id(*parts: str) -> str:
    """A stable notice id from what makes the event itself (not when it was seen)."""
    return "n-" + hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:24]


def queue_notice(root: Path, notice: Notice, *, spawn: bool = True) -> bool:
    """Queue `notice` once for every sink that wants it; True when it was newly queued."""
    try:
        if not has_sinks(root):
            return False
        sinks = [s.sink_id for s in all_sinks(root) if s.wants(notice)]
        if not sinks:
            return False
        created = outbox.queue(root, notice, sinks)
    except (LoopxError, OSError, ValueError):
        return False  # doctor reports a damaged sink file or outbox; the command goes on
    if created and spawn:
        spawn_flush(root)
    return created


def spawn_flush(root: Path) -> bool:
    """Start `loopx notify flush --linger` detached (its own session, no terminal); never waits."""
    if os.environ.get(FLUSH_ENV, "").strip().lower() in ("0", "off", "no", "false"):
        return False
    import subprocess  # only to start the flush: a goal's closing step queues its notice without it

    code = "import sys; from loopx_core.cli.entry import main; main(sys.argv[1:])"
    argv = [sys.executable, "-c", code, "--root", str(root), "notify", "flush"]
    argv += ["--linger", str(LINGER_SECONDS)]
    try:
        subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
            cwd=str(root),
        )
    except OSError:
        return False
    return True
