"""Installing the Codex facade where it writes no heartbeat automation says so, and how to get
one: the named command, run with a real goal and agent, installs the automation."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

from tests.builders import demo_project
from tests.conftest import run_loopx


def _notes(out: str) -> str:
    return " ".join(json.loads(out)["notices"])


def test_project_scope_says_no_heartbeat_and_the_named_command_adds_one(tmp_path: Path) -> None:
    root = demo_project(tmp_path / "p")
    done = run_loopx("workflow-skills", "--install", "--surface", "codex-app", "-f", "json", root=root)
    assert done.exit_code == 0, done.stderr
    notes = _notes(done.stdout)
    assert "No heartbeat automation at project scope" in notes, notes
    command = notes.split("`loopx ", 1)[1].split("`", 1)[0]
    words = [w.replace("GOAL", "demo").replace("AGENT", "builder") for w in shlex.split(command)]
    added = run_loopx(*words, "-f", "json", root=root)
    assert added.exit_code == 0, added.stderr
    codex_home = Path(os.environ["CODEX_HOME"])
    assert (codex_home / "automations" / "loopx-demo-builder" / "automation.toml").is_file()
    assert "No heartbeat" not in _notes(added.stdout)


def test_user_scope_without_a_goal_says_no_heartbeat(tmp_path: Path) -> None:
    root = demo_project(tmp_path / "p")
    done = run_loopx(
        "workflow-skills", "--install", "--surface", "codex-app", "--scope", "user", "-f", "json", root=root
    )
    assert done.exit_code == 0, done.stderr
    assert "No heartbeat automation: give --goal-id and --agent-id" in _notes(done.stdout)
