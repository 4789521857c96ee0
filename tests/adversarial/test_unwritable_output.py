"""Class: a command whose stdout refuses its output says so in one line, never a traceback.

Observed: `loopx quota should-run ... >/dev/full` (a full disk) and `... >&-` (stdout closed
before loopx started) printed "internal error: OSError" and then a traceback with absolute
paths (the error's own JSON went to the same stdout); `loopx status` on a closed pipe exited
1 saying nothing; a refusal whose JSON went to a closed pipe lost its exit code. Now the
console script guards its stdout (cli/pipe.py): whatever refuses a write, an answer that cannot
be written is one line on stderr and exit 1, and a failing command keeps its own line and code.

Proved over every kind of command (the hot ones, a settlement command, typer's, help, a
refusal) and every kind of unwritable stdout (a pipe whose reader has gone, a full device,
a closed descriptor), in every output format the command has.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from loopx_core.cli.pipe import READER_GONE
from tests.builders import demo_project
from tests.conftest import LOOPX_BIN, T0_ISO

WHO = ["-g", "demo", "-a", "builder"]
ANSWERS = {
    "should-run": ["quota", "should-run", *WHO],
    "hook": ["hook", "claude-session-start", *WHO],
    "heartbeat-prompt": ["heartbeat-prompt", *WHO, "--surface", "codex-app"],
    "turn begin": ["turn", "begin", *WHO, "-t", "t1"],
    "status": ["status"],
    "todo list": ["todo", "list", "-g", "demo"],
    "help": ["goal", "--help"],
}
"""Commands that answer on stdout (exit 0 with a writable one)."""
FORMATS = {"should-run": ["json", "markdown"], "turn begin": ["json"], "status": ["json", "human"]}
REFUSAL = ["quota", "spend", *WHO, "-k", "nope", "-f", "json"]
"""A usage error (exit 2) whose JSON error object goes to stdout too."""
LOST = "loopx: error: the output could not be written ({}): the answer is lost\n"


def run(root: Path, argv: list[str], stdout: str) -> tuple[int, str]:
    """`loopx --root ROOT ARGV` with an unwritable stdout: `gone` (a pipe whose reader has gone),
    `full` (/dev/full) or `closed` (no descriptor 1 at all); (exit code, stderr)."""
    command = [str(LOOPX_BIN), "--root", str(root), *argv]
    env = {**os.environ, "LOOPX_NOW": T0_ISO}
    options: dict[str, object] = {"stderr": subprocess.PIPE, "input": b"{}", "env": env, "timeout": 60}
    if stdout == "gone":
        reader, writer = os.pipe()
        os.close(reader)
        try:
            proc = subprocess.run(command, stdout=writer, check=False, **options)  # type: ignore[call-overload]
        finally:
            os.close(writer)
    elif stdout == "full":
        with open("/dev/full", "wb") as full:
            proc = subprocess.run(command, stdout=full, check=False, **options)  # type: ignore[call-overload]
    else:
        shell = ["sh", "-c", 'exec "$@" >&-', "sh", *command]
        proc = subprocess.run(shell, check=False, **options)  # type: ignore[call-overload]
    return proc.returncode, proc.stderr.decode()


CASES = [(name, fmt) for name in ANSWERS for fmt in FORMATS.get(name, [None])]


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo project (goal `demo`, agent `builder`, todo `t1`)."""
    return demo_project(tmp_path_factory.mktemp("unwritable") / "project")


@pytest.mark.parametrize("stdout", ["gone", "full", "closed"])
@pytest.mark.parametrize(("name", "fmt"), CASES)
def test_an_answer_that_cannot_be_written_is_one_line_and_exit_1(
    root: Path, name: str, fmt: str | None, stdout: str
) -> None:
    argv = ANSWERS[name] + (["-f", fmt] if fmt else [])
    code, err = run(root, argv, stdout)
    expected = {
        "gone": READER_GONE,
        "full": LOST.format("No space left on device"),
        "closed": LOST.format("standard output is closed"),
    }[stdout]
    assert (code, err) == (1, expected), (argv, stdout)


@pytest.mark.parametrize("stdout", ["gone", "full", "closed"])
def test_a_refusal_keeps_its_line_and_code_whatever_stdout_is(root: Path, stdout: str) -> None:
    code, err = run(root, REFUSAL, stdout)
    assert code == 2 and err.count("\n") == 1 and err.startswith("loopx: error: invalid --turn-key"), err
    assert "Traceback" not in err and str(root) not in err
