"""A settlement command whose output pipe is closed says so in one line, as the hot commands do.

The class: every settlement command (cli/settle.py), answering or refusing, run as
the process with a stdout whose reader has gone. An answer that cannot be delivered is
`READER_GONE` on stderr and exit 1 (never "internal error: BrokenPipeError", never Python's
"Exception ignored" block); a refusal keeps its own line and its exit code.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from loopx_core.cli.entry import READER_GONE
from tests.builders import demo_project
from tests.conftest import LOOPX_BIN, T0_ISO, run_loopx

WHO = ["-g", "demo", "-a", "builder"]


def closed(root: Path, *argv: str) -> tuple[int, str]:
    """`loopx --root ROOT ARGV` with a stdout pipe whose reading end is already closed."""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        proc = subprocess.run(
            [str(LOOPX_BIN), "--root", str(root), *argv],
            stdout=writer,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "LOOPX_NOW": T0_ISO},
            timeout=60,
            check=False,
        )
    finally:
        os.close(writer)
    return proc.returncode, proc.stderr.decode()


@pytest.mark.parametrize("fmt", ["json", "markdown", "human"])
def test_every_step_of_a_turn_on_a_closed_pipe(tmp_path: Path, fmt: str) -> None:
    root = demo_project(tmp_path / "project")
    assert closed(root, "turn", "begin", *WHO, "-t", "t1", "-f", fmt) == (1, READER_GONE)
    begun = run_loopx("turn", "begin", *WHO, "-t", "t1", "-f", "json", root=root)
    key = json.loads(begun.stdout)["turn_key"]  # the closed pipe's begin did begin: the same turn
    steps = (
        ["writeback", *WHO, "-k", key, "-s", "done", "--validation-status", "passed"],
        ["quota", "spend", *WHO, "-k", key],
        ["todo", "complete", *WHO, "-t", "t1", "-e", "ok"],
    )
    for argv in steps:
        assert closed(root, *argv, "-f", fmt) == (1, READER_GONE), argv


def test_a_refusal_on_a_closed_pipe_keeps_its_line_and_code(tmp_path: Path) -> None:
    root = demo_project(tmp_path / "project")
    code, err = closed(root, "quota", "spend", *WHO, "-k", "nope", "-f", "markdown")
    assert code == 2 and err.count("\n") == 1 and "invalid --turn-key" in err, err
