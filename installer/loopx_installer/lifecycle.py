"""The host side of an install: how hosts run LoopX, the notes to print, unregistering at uninstall."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from loopx_core.hosts import Host, HostSteps, RenderContext
from loopx_core.hosts.manager import plugin_call
from loopx_installer.progress import step

UNREGISTER_TIMEOUT_S = 120
NOT_ON_PATH = (
    "`loopx` is not on PATH, so the facade runs this loopx by its absolute path "
    "(pass --loopx-command to choose another)."
)
NOWHERE = "`loopx` is not on PATH: hosts will not find it; pass --loopx-command with its path."


def running_loopx() -> Path | None:
    """The `loopx` executable of this process: the script it was started as, else the one beside Python."""
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.name == "loopx" and argv0.is_file():
        return argv0.absolute()
    sibling = Path(sys.executable).parent / "loopx"
    return sibling if sibling.is_file() and os.access(sibling, os.X_OK) else None


def default_loopx() -> tuple[str, str | None]:
    """How hosts should run LoopX when `--loopx-command` is not given, and a note when it is not `loopx`."""
    if shutil.which("loopx"):
        return "loopx", None
    found = running_loopx()
    return (str(found), NOT_ON_PATH) if found is not None else ("loopx", NOWHERE)


def host_steps(h: Host, operation: str, context: RenderContext) -> HostSteps:
    """The host's notes and unregister commands for this operation (a failing host is one line)."""
    with plugin_call(h.name, "steps"):
        answer = h.steps(operation, context)
        if not isinstance(answer, HostSteps):
            raise TypeError(f"steps() returned {type(answer).__name__}, not HostSteps")
    return answer


def unregister(h: Host, commands: tuple[tuple[str, ...], ...], cwd: Path, *, dry_run: bool) -> list[str]:
    """Run each command whose program is on PATH (print the others); one note per command."""
    notes = []
    for argv in commands:
        shown = shlex.join(argv)
        if dry_run:
            notes.append(f"Would run `{shown}` to take LoopX out of {h.title}.")
            continue
        program = shutil.which(argv[0]) if argv else None
        if program is None:
            notes.append(f"Run `{shown}` to take LoopX out of {h.title} ({argv[0]} is not on PATH here).")
            continue
        step(f"unregistering LoopX from {h.title}: {shown}")
        notes.append(_run(program, argv, shown, cwd))
    return notes


def _run(program: str, argv: tuple[str, ...], shown: str, cwd: Path) -> str:
    try:
        done = subprocess.run(
            [program, *argv[1:]],
            cwd=cwd if cwd.is_dir() else None,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=UNREGISTER_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"`{shown}` timed out after {UNREGISTER_TIMEOUT_S} s: run it again by hand."
    except OSError as exc:
        return f"`{shown}` could not run ({exc.strerror}): run it by hand."
    if done.returncode == 0:
        return f"Ran `{shown}`."
    return f"Ran `{shown}`: exit {done.returncode} (LoopX was probably not registered there)."
