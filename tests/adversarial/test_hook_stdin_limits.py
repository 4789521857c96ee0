"""Class: the edges of what `loopx hook` reads.

The host's event arrives on stdin, read up to `MAX_INPUT_BYTES`: exactly that many bytes are
read (blank: the empty event), one more is one clear line and exit 1 (never 2, which hosts
read as "block"), and nothing is written. A stdin without a byte buffer (an embedding
program's `io.StringIO`) gives the same answer as the bytes.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from loopx_core.cli.hooks import MAX_INPUT_BYTES, run_hook
from tests.conftest import Cli, Project
from tests.scenarios import SCENARIOS

STOP = ("hook", "claude-stop", "-g", "g", "-a", "builder")


@pytest.fixture
def running(project: Project) -> Project:
    """A goal where should-run says run, so the Stop hook reads (and writes) its counter."""
    SCENARIOS["eligible_workspace"](project)
    return project


def files_of(root: Path) -> dict[str, bytes]:
    """Every file of the project's state."""
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted((root / ".loopx").rglob("*")) if p.is_file()
    }


def event(active: bool = False) -> str:
    """A Claude Code Stop event."""
    return json.dumps({"session_id": "s-1", "hook_event_name": "Stop", "stop_hook_active": active})


def test_one_byte_over_the_limit_is_one_line_and_writes_nothing(cli: Cli, running: Project) -> None:
    before = files_of(running.root)
    result = cli(*STOP, input=" " * (MAX_INPUT_BYTES + 1))
    assert result.exit_code == 1 and result.stdout == ""
    assert (
        result.stderr
        == f"loopx: hook claude-stop: the hook input is larger than {MAX_INPUT_BYTES // 1_000_000} MB\n"
    )
    assert files_of(running.root) == before


def test_exactly_the_limit_is_read(cli: Cli, running: Project) -> None:
    padded = event() + " " * (MAX_INPUT_BYTES - len(event()))
    assert len(padded.encode()) == MAX_INPUT_BYTES
    assert json.loads(cli(*STOP, input=padded).stdout)["decision"] == "block"


def test_a_text_stdin_answers_as_the_bytes_do(
    cli: Cli, running: Project, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    through_bytes = cli(*STOP, input=event())
    assert through_bytes.exit_code == 0, through_bytes.stderr
    assert json.loads(through_bytes.stdout)["decision"] == "block"
    counter = next((running.store.state_dir / "hooks").glob("claude-stop-*.json"))
    counter.unlink()  # the same counter state for the second run
    monkeypatch.setenv("LOOPX_NOW", cli.now)
    monkeypatch.setattr(sys, "stdin", io.StringIO(event()))
    capsys.readouterr()
    code = run_hook(root=str(running.root), name="claude-stop", goal_id="g", agent_id="builder")
    out, err = capsys.readouterr()
    assert (code, out, err) == (through_bytes.exit_code, through_bytes.stdout, through_bytes.stderr)
    monkeypatch.setattr(sys, "stdin", io.StringIO("[1]"))
    assert run_hook(root=str(running.root), name="claude-stop", goal_id="g", agent_id="builder") == 1
    assert capsys.readouterr().err == "loopx: hook claude-stop: the hook input must be a JSON object\n"
