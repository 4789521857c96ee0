"""`loopx history`, the last run in `loopx status`, and a finished goal that reads as done."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from loopx_core.clock import iso
from loopx_core.ops import todos
from tests.builders import build_project, settle_turn
from tests.conftest import T0, run_loopx


def _project(root: Path) -> None:
    store = build_project(root, todo_count=3)
    for n, agent in ((1, "builder"), (2, "other"), (3, "builder")):
        at = T0 + timedelta(minutes=10 * n)
        settle_turn(store, agent, f"t{n}", at=at)
        todos.complete_todo(store, "g", f"t{n}", at, agent_id=agent)


def test_history_lists_runs_newest_first_with_filters(tmp_path: Path, snapshot_json, snapshot_md) -> None:  # type: ignore[no-untyped-def]
    _project(tmp_path)
    every = json.loads(run_loopx("history", "--format", "json", root=tmp_path).stdout)["runs"]
    assert [(r["todo_id"], r["agent_id"]) for r in every] == [
        ("t3", "builder"),
        ("t2", "other"),
        ("t1", "builder"),
    ]
    assert {r["progress"] for r in every} == {"todo_worked"}
    mine = json.loads(run_loopx("history", "-a", "builder", "-f", "json", root=tmp_path).stdout)["runs"]
    assert [r["todo_id"] for r in mine] == ["t3", "t1"]
    late = json.loads(
        run_loopx("history", "--since", iso(T0 + timedelta(minutes=20)), "-f", "json", root=tmp_path).stdout
    )["runs"]
    assert [r["todo_id"] for r in late] == ["t3", "t2"]
    assert [
        r["todo_id"]
        for r in json.loads(run_loopx("history", "-n", "1", "-f", "json", root=tmp_path).stdout)["runs"]
    ] == ["t3"]
    assert every == snapshot_json
    assert run_loopx("history", "-f", "markdown", root=tmp_path).stdout == snapshot_md


def test_history_refuses_bad_filters_and_answers_a_damaged_history(tmp_path: Path) -> None:
    _project(tmp_path)
    for args in (["-a", "Bad\n"], ["-n", "-1"], ["--since", "yesterday"], ["-g", "ghost"]):
        result = run_loopx("history", *args, root=tmp_path)
        assert result.exit_code in (2, 3) and result.stderr.count("\n") == 1, (args, result.stderr)
    index = tmp_path / ".loopx/goals/g/runs/index.jsonl"
    index.write_text(index.read_text() + "{garbage\n")
    damaged = run_loopx("history", root=tmp_path)
    assert damaged.exit_code == 4 and "run history" in damaged.stderr and str(tmp_path) not in damaged.stderr


def test_status_shows_the_last_run_and_a_done_goal_as_done(tmp_path: Path) -> None:
    _project(tmp_path)
    [row] = json.loads(run_loopx("status", "--format", "json", root=tmp_path).stdout)["goals"]
    assert (row["last_run"]["todo_id"], row["last_run"]["agent_id"]) == ("t3", "builder")
    store = build_project(tmp_path / "done", todo_count=1)
    journal = settle_turn(store, "builder", "t1")
    closed = run_loopx(
        "todo", "complete", "--no-follow-up", "-g", "g", "-t", "t1", "-a", "builder", "-k", journal.turn_key,
        root=tmp_path / "done",
    )  # fmt: skip
    assert closed.exit_code == 0, closed.stderr
    [done] = json.loads(run_loopx("status", "--format", "json", root=tmp_path / "done").stdout)["goals"]
    assert (done["state"], done["who_acts"]) == ("done", "nobody")
    assert "| done | nobody |" in run_loopx("status", "-f", "markdown", root=tmp_path / "done").stdout
