"""Class: a paused goal's packet names a command, and that command un-pauses it.

Observed: a finished goal's packet said "Goal is paused; resume it to continue" while `goal
resume` refuses a done goal. For every reason a goal is paused (stopped, compute 0, done), the
command in the packet's `recommended_action` is run as written and the next tick runs again.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from tests.builders import demo_project
from tests.conftest import run_loopx

PAUSES = {
    "goal_stopped": ["goal", "stop", "-g", "demo"],
    "compute_zero": ["goal", "configure", "-g", "demo", "--compute", "0"],
    "goal_done": ["goal", "archive", "-g", "demo"],
}


def _tick(root: Path) -> dict[str, object]:
    out = run_loopx("quota", "should-run", "-g", "demo", "-a", "builder", "-f", "json", root=root)
    assert out.exit_code == 0, out.stderr
    return json.loads(out.stdout)  # type: ignore[no-any-return]


@pytest.mark.parametrize("cause", sorted(PAUSES))
def test_the_command_a_paused_packet_names_resumes_the_goal(tmp_path: Path, cause: str) -> None:
    root = demo_project(tmp_path / "p")
    assert run_loopx(*PAUSES[cause], root=root).exit_code == 0
    packet = _tick(root)
    assert packet["decision"] == "skip" and cause in packet["work_lane_contract"]["reason_codes"], packet  # type: ignore[index]
    named = re.findall(r"`(loopx [^`]+)`", str(packet["recommended_action"]))
    assert len(named) == 1, packet["recommended_action"]
    words = shlex.split(named[0])[1:]
    done = run_loopx(*words, root=root)
    assert done.exit_code == 0, (words, done.stderr)
    assert _tick(root)["decision"] == "run"


def test_run_once_asks_for_nothing_it_has_done(tmp_path: Path) -> None:
    """A settled `turn run-once` completed its todo: its result names no `todo complete`, and
    every action it does name runs as written."""
    root = demo_project(tmp_path / "p")
    out = run_loopx(
        "turn", "run-once", "-g", "demo", "-a", "builder", "--host-command", "true",
        "--validation-command", "true", "-f", "json", root=root,
    )  # fmt: skip
    assert out.exit_code == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["status"] == "committed"
    assert not any("todo complete" in a for a in result["next_cli_actions"]), result["next_cli_actions"]
    for action in result["next_cli_actions"]:
        assert run_loopx(*shlex.split(action)[1:], root=root).exit_code == 0, action
    todos = json.loads(run_loopx("todo", "list", "-g", "demo", "-f", "json", root=root).stdout)
    assert [t["status"] for t in todos["todos"]] == ["done"]


def test_a_skipped_run_once_says_why_in_words(tmp_path: Path) -> None:
    root = demo_project(tmp_path / "p")
    run_loopx("goal", "stop", "-g", "demo", root=root)
    out = run_loopx(
        "turn",
        "run-once",
        "-g",
        "demo",
        "-a",
        "builder",
        "--host-command",
        "true",
        "--validation-command",
        "true",
        "-f",
        "markdown",
        root=root,
    )
    assert out.exit_code == 0, out.stderr
    first = out.stdout.splitlines()[0]
    assert first == "Skipped: Goal is stopped; `loopx goal resume -g demo` resumes it.", first
