"""An agent registered `--monitor-only` observes and polls; it never takes a todo or a turn."""

from __future__ import annotations

import json
from pathlib import Path

from loopx_core.errors import ExitCode
from tests.builders import build_project
from tests.conftest import run_loopx


def test_a_monitor_only_agent_may_not_claim_or_begin(tmp_path: Path) -> None:
    build_project(tmp_path)
    assert run_loopx("agent", "register", "-a", "watcher", "--monitor-only", root=tmp_path).exit_code == 0
    before = (tmp_path / ".loopx/goals/g/state.json").read_bytes()
    for args in (
        ["todo", "claim", "-g", "g", "-t", "t1", "-a", "watcher"],
        ["turn", "begin", "-g", "g", "-a", "watcher", "-t", "t1"],
        ["turn", "begin", "-g", "g", "-a", "watcher", "--replan"],
    ):
        refused = run_loopx(*args, root=tmp_path)
        assert refused.exit_code == int(ExitCode.PERMISSION_DENIED), refused.stderr
        assert "monitor-only" in refused.stderr
    assert (tmp_path / ".loopx/goals/g/state.json").read_bytes() == before
    packet = json.loads(run_loopx("quota", "should-run", "-g", "g", "-a", "watcher", root=tmp_path).stdout)
    assert (packet["should_run"], packet["work_lane_contract"]["lane"]) == (False, "monitor")


def test_the_flag_is_kept_until_changed(tmp_path: Path) -> None:
    build_project(tmp_path)
    run_loopx(
        "agent", "register", "-a", "watcher", "--monitor-only", "--cadence-minutes", "10", root=tmp_path
    )
    again = json.loads(run_loopx("agent", "register", "-a", "watcher", "-c", "python", root=tmp_path).stdout)
    assert (again["monitor_only"], again["cadence_minutes"]) == (True, 10.0)
    worker = json.loads(run_loopx("agent", "register", "-a", "watcher", "--takes-work", root=tmp_path).stdout)
    assert worker["monitor_only"] is False
    assert run_loopx("todo", "claim", "-g", "g", "-t", "t1", "-a", "watcher", root=tmp_path).exit_code == 0
