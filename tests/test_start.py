"""`loopx start`: from a task in a host's chat to a governed loop in one command."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_loopx


def test_a_first_task_creates_the_state_goal_agent_and_todo_then_says_run(tmp_path: Path) -> None:
    first = run_loopx("start", "--title", "Ship the parser!", "-a", "builder", root=tmp_path)
    assert first.exit_code == 0, first.stderr
    data = json.loads(first.stdout)
    assert (data["goal_id"], data["todo_id"], data["created_goal"], data["registered_agent"]) == (
        "ship-the-parser", "t1", True, True,
    )  # fmt: skip
    assert data["should_run"]["effective_action"] == "work_todo"
    second = json.loads(run_loopx("start", "--title", "Write docs", "-a", "builder", root=tmp_path).stdout)
    assert (second["goal_id"], second["todo_id"], second["created_goal"]) == ("ship-the-parser", "t2", False)


def test_several_active_goals_need_a_goal_id_and_bad_input_is_one_line(tmp_path: Path) -> None:
    run_loopx("start", "--title", "One", "-a", "builder", root=tmp_path)
    run_loopx("start", "--title", "Two", "-a", "builder", "-g", "two", root=tmp_path)
    ambiguous = run_loopx("start", "--title", "Three", "-a", "builder", root=tmp_path)
    assert ambiguous.exit_code == 2 and "pass --goal-id" in ambiguous.stderr
    for args in (
        ["--title", " ", "-a", "builder"],
        ["--title", "x", "-a", "Bad Agent"],
        ["--title", "x", "-a", "b", "-g", "../x"],
    ):
        bad = run_loopx("start", *args, root=tmp_path)
        assert bad.exit_code == 2 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr
    assert (
        json.loads(
            run_loopx("start", "--title", "Three", "-a", "builder", "-g", "two", root=tmp_path).stdout
        )["todo_id"]
        == "t2"
    )
