"""Progress, not motion: every settled turn says what it advanced; N empty turns in a row ask the owner."""

from __future__ import annotations

import json
from pathlib import Path

from tests.builders import build_project
from tests.conftest import run_loopx


def _turn(root: Path, *begin: str, no_progress: str | None = None, add_todo: str | None = None) -> dict:  # type: ignore[type-arg]
    begun = run_loopx("turn", "begin", "-g", "g", "-a", "builder", *begin, root=root)
    assert begun.exit_code == 0, begun.stderr
    key = json.loads(begun.stdout)["turn_key"]
    if add_todo:
        assert run_loopx("todo", "add", "-g", "g", "--title", add_todo, root=root).exit_code == 0
    wb = ["writeback", "-g", "g", "-a", "builder", "-k", key, "-s", "s", "--validation-status", "passed"]
    written = run_loopx(*wb, *(["--no-progress", no_progress] if no_progress else []), root=root)
    assert written.exit_code == 0, written.stderr
    assert run_loopx("quota", "spend", "-g", "g", "-a", "builder", "-k", key, root=root).exit_code == 0
    return json.loads(written.stdout)


def _history(root: Path) -> list[dict]:  # type: ignore[type-arg]
    lines = (root / ".loopx/goals/g/runs/index.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def _state(root: Path) -> dict:  # type: ignore[type-arg]
    return json.loads((root / ".loopx/goals/g/state.json").read_text())


def test_each_settled_turn_states_what_it_advanced(tmp_path: Path) -> None:
    build_project(tmp_path, todo_count=0)
    _turn(tmp_path, "--replan", add_todo="Write the lexer")
    _turn(tmp_path, "-t", "t1")
    assert [(h["progress"], h["progress_detail"]) for h in _history(tmp_path)] == [
        ("todos_added", "todos t1"),
        ("todo_worked", "todo t1"),
    ]


def test_three_empty_replans_in_a_row_open_a_gate_that_says_why(tmp_path: Path) -> None:
    build_project(tmp_path, todo_count=0)
    for _ in range(2):
        _turn(tmp_path, "--replan")
        assert _state(tmp_path)["gates"] == []
    _turn(tmp_path, "--replan")
    [gate] = _state(tmp_path)["gates"]
    assert (gate["kind"], gate["status"]) == ("no_progress", "open")
    assert "3 settled turns in a row advanced nothing" in gate["title"]
    assert "replan turn added or re-scoped no todo" in gate["title"]
    packet = json.loads(run_loopx("quota", "should-run", "-g", "g", "-a", "builder", root=tmp_path).stdout)
    assert (packet["quota"]["state"], packet["interaction_contract"]["user_channel"]["action_required"]) == (
        "operator_gate",
        True,
    )
    assert [h["progress"] for h in _history(tmp_path)] == ["none"] * 3


def test_progress_resets_the_count_and_the_limit_is_configurable(tmp_path: Path) -> None:
    build_project(tmp_path, todo_count=1)
    assert run_loopx("goal", "configure", "-g", "g", "--no-progress-limit", "2", root=tmp_path).exit_code == 0
    _turn(tmp_path, "-t", "t1", no_progress="the tests would not run")
    assert _state(tmp_path)["no_progress_turns"] == 1
    run_loopx("todo", "release", "-g", "g", "-t", "t1", "-a", "builder", root=tmp_path)
    _turn(tmp_path, "-t", "t1")
    assert _state(tmp_path)["no_progress_turns"] == 0
    run_loopx("todo", "release", "-g", "g", "-t", "t1", "-a", "builder", root=tmp_path)
    _turn(tmp_path, "-t", "t1", no_progress="still broken")
    run_loopx("todo", "release", "-g", "g", "-t", "t1", "-a", "builder", root=tmp_path)
    _turn(tmp_path, "-t", "t1", no_progress="still broken")
    [gate] = _state(tmp_path)["gates"]
    assert "2 settled turns" in gate["title"] and "still broken" in gate["title"]


def test_a_blocked_todo_re_scoped_is_open_again_and_progress_for_a_replan(tmp_path: Path) -> None:
    build_project(tmp_path, todo_count=1)
    run_loopx("todo", "block", "-g", "g", "-t", "t1", "--reason", "needs a decision", root=tmp_path)
    begun = json.loads(
        run_loopx("turn", "begin", "-g", "g", "-a", "builder", "--replan", root=tmp_path).stdout
    )
    run_loopx("todo", "update", "-g", "g", "-t", "t1", "--title", "Smaller first step", root=tmp_path)
    key = begun["turn_key"]
    wb = ["writeback", "-g", "g", "-a", "builder", "-k", key, "-s", "s", "--validation-status", "passed"]
    assert run_loopx(*wb, root=tmp_path).exit_code == 0
    assert (_history(tmp_path)[-1]["progress"], _state(tmp_path)["todos"][0]["status"]) == (
        "todos_added",
        "open",
    )
