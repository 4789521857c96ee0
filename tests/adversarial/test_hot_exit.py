"""A hot command run as the process ends as the interpreter would end it: same output, same code.

cli/entry.py's `_hot` stops the cyclic collector and leaves with `os._exit` once stdout and
stderr are flushed (the interpreter's teardown costs a tick ~2 ms), unless an exit handler
is registered. The class: "everything a hot command says and returns, whichever way it
ends". Each hot command (should-run in each format, refusals, both Claude hooks, the
heartbeat prompt) is run twice as the process: the lean way, and with an exit handler
registered, which makes it exit the interpreter's way. Both must give the same bytes and the
same exit code, and the handler must still run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from loopx_core.cli.entry import READER_GONE
from tests.builders import demo_project
from tests.conftest import REPO, T0_ISO
from tests.probe import NO_COVERAGE

WHO = ["-g", "demo", "-a", "builder"]
COMMANDS = {
    "should-run": ["quota", "should-run", *WHO],
    "should-run json": ["quota", "should-run", *WHO, "-f", "json"],
    "should-run markdown": ["quota", "should-run", *WHO, "-f", "markdown"],
    "should-run --surface codex-app": ["quota", "should-run", *WHO, "--surface", "codex-app"],
    "should-run, unknown goal": ["quota", "should-run", "-g", "nope", "-a", "builder"],
    "should-run, bad id": ["quota", "should-run", "-g", "Bad Id", "-a", "builder"],
    "hook claude-stop": ["hook", "claude-stop", *WHO],
    "hook claude-session-start": ["hook", "claude-session-start", *WHO],
    "hook, unknown event": ["hook", "no-such-event", *WHO],
    "heartbeat-prompt": ["heartbeat-prompt", *WHO, "--surface", "codex-app"],
}
_CODE = """\
import atexit, sys
if sys.argv[1] == "handler":
    atexit.register(lambda path=sys.argv[2]: open(path, "w").write("ran"))
sys.argv = ["loopx", *sys.argv[3:]]
from loopx_core.cli.entry import main
main()
"""


def run(
    root: Path, argv: list[str], mode: str, marker: Path, *, closed_stdout: bool = False
) -> tuple[int, str, str]:
    """One hot command as the process (`mode` `handler`: with an exit handler registered);
    `closed_stdout`: its stdout a pipe whose reading end is already closed."""
    event = json.dumps({"session_id": "s1", "cwd": str(root)})
    reader, writer = os.pipe()
    if closed_stdout:
        os.close(reader)
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _CODE, mode, str(marker), "--root", str(root), *argv],
            input=event,
            stdout=writer if closed_stdout else subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**NO_COVERAGE, "LOOPX_NOW": T0_ISO, "PATH": "", "HOME": str(root)},
            cwd=REPO,
            check=False,
        )
    finally:
        os.close(writer)
        if not closed_stdout:
            os.close(reader)
    return proc.returncode, proc.stdout or "", proc.stderr


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_hot_command_ends_as_the_interpreter_would_end_it(tmp_path: Path, command: str) -> None:
    lean_root, usual_root = demo_project(tmp_path / "lean"), demo_project(tmp_path / "usual")
    marker = tmp_path / "handler-ran"
    lean = run(lean_root, COMMANDS[command], "lean", tmp_path / "unused")
    usual = run(usual_root, COMMANDS[command], "handler", marker)
    assert marker.read_text() == "ran"  # the exit handler ran: the interpreter's own exit
    shown = [
        tuple(part.replace(str(root), "ROOT") for part in (out, err))
        for (_, out, err), root in ((lean, lean_root), (usual, usual_root))
    ]
    assert (lean[0], shown[0]) == (usual[0], shown[1])
    assert lean[1] or lean[2]  # it said something: an answer, a packet or its error line


@pytest.mark.parametrize("mode", ["lean", "handler"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_hot_command_whose_reader_has_gone_says_so_in_one_line(
    tmp_path: Path, command: str, mode: str
) -> None:
    """stdout a closed pipe (the host stopped reading): no traceback, no `Exception ignored`, one
    `loopx:` line on stderr: the command's own error line and exit code when it was failing,
    else that the output was lost, and exit 1; the same either way the process exits."""
    root = demo_project(tmp_path / "p")
    code, _, err = run(root, COMMANDS[command], mode, tmp_path / "marker", closed_stdout=True)
    assert "Traceback" not in err and "Exception ignored" not in err, err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("loopx: "), err
    if lines[0] == READER_GONE.strip():
        assert code == 1
    else:  # a failing command: its own error line and exit code, as with a reader
        assert (code, err) == run(demo_project(tmp_path / "q"), COMMANDS[command], mode, tmp_path / "m")[::2]
        assert code not in (0, 1) or command.startswith("hook")
