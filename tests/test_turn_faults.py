"""Fault injection with real processes: die after (or inside) each phase, then resume.

Whatever the crash point, the ledger holds exactly one spend for the turn, the run log
exactly one writeback, and the journal a legal phase prefix.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from loopx_core.faults import FAULT_EXIT_CODE
from loopx_core.ops import goals, todos
from loopx_core.store.files import FileStore
from tests.conftest import T0, run_loopx

HOST = 'echo "$LOOPX_TODO_ID" >> work.log'
VALIDATE = "test -s work.log"
SETTLEMENT = ["validation", "durable_writeback", "quota_spend", "terminal_closeout"]
FAULTS = [f"after:{p}" for p in ["host_execute", "typed_result", *SETTLEMENT]] + [
    f"before_receipt:{p}" for p in SETTLEMENT
]


def project(root: Path, todo_count: int = 1) -> None:
    store = FileStore(root)
    store.init()
    goals.add_goal(store, "g", "Objective", T0)
    goals.register_agent(store, "builder", [], T0)
    for n in range(todo_count):
        todos.add_todo(store, "g", f"Todo {n + 1}", T0)


def run_once(root: Path, *extra: str, fault: str | None = None, host: str = HOST, validate: str = VALIDATE):  # type: ignore[no-untyped-def]
    """`loopx turn run-once` for builder on goal g, in a real process."""
    env = {"LOOPX_FAULT": fault} if fault else {}
    args = [
        "turn",
        "run-once",
        "-g",
        "g",
        "-a",
        "builder",
        "--host-command",
        host,
        "--validation-command",
        validate,
    ]
    return run_loopx(*args, *extra, root=root, now=None, env=env)


def check_settled_once(root: Path) -> dict:  # type: ignore[type-arg]
    """One spend, one indexed run, a committed journal whose phases are a legal prefix."""
    events = [json.loads(line) for line in (root / ".loopx/goals/g/events.jsonl").read_text().splitlines()]
    spends = [e for e in events if e["kind"] == "spend"]
    assert len(spends) == 1, spends
    runs = (root / ".loopx/goals/g/runs/index.jsonl").read_text().splitlines()
    assert len(runs) == 1, runs
    assert len(list((root / ".loopx/goals/g/runs").glob("run-*.json"))) == 1
    key = json.loads(runs[0])["turn_key"]
    inspection = run_loopx("turn", "inspect-journal", "-g", "g", "-a", "builder", "-k", key, root=root)
    projection = json.loads(inspection.stdout)
    assert (projection["decision"], projection["journal_status"]) == ("replay_legal", "committed")
    assert (
        spends[0]["turn_instance_id"]
        == json.loads((root / ".loopx/goals/g/turns" / f"{key[7:]}.json").read_text())["identity"][
            "turn_instance_id"
        ]
    )
    return projection


@pytest.mark.parametrize("fault", FAULTS)
def test_crash_then_resume_settles_exactly_once(tmp_path: Path, fault: str) -> None:
    project(tmp_path)
    extra = ("--no-follow-up",) if fault.endswith("terminal_closeout") else ()
    crashed = run_once(tmp_path, *extra, fault=fault)
    assert crashed.exit_code == FAULT_EXIT_CODE, crashed.stderr
    packet = json.loads(
        run_loopx("quota", "should-run", "-g", "g", "-a", "builder", root=tmp_path, now=None).stdout
    )
    closed = fault.endswith("terminal_closeout")  # the closeout took effect: the goal is terminal (paused)
    assert packet["effective_action"] == ("pause" if closed else "resume_turn")
    resumed = run_once(tmp_path, "--resume", *extra)
    assert resumed.exit_code == 0, resumed.stderr
    again = run_once(tmp_path, "--resume", *extra)
    assert again.exit_code == 3  # nothing left to resume
    projection = check_settled_once(tmp_path)
    phases = ["host_execute", "typed_result", "validation", "durable_writeback", "quota_spend"]
    phases += ["terminal_closeout"] if extra else []
    assert projection["completed_phases"] == phases
    state = json.loads((tmp_path / ".loopx/goals/g/state.json").read_text())
    assert state["todos"][0]["status"] == "done" and state["open_turns"] == {}


def test_sigkill_during_host_work(tmp_path: Path) -> None:
    """The host command kills the driver outright (SIGKILL); resume re-runs the uncommitted host phase."""
    project(tmp_path)
    killer = "test -e killed-once || { touch killed-once; kill -9 $PPID; sleep 5; }; echo work >> work.log"
    crashed = run_once(tmp_path, host=killer)
    assert crashed.exit_code == -9
    resumed = run_once(tmp_path, "--resume", host=killer)
    assert resumed.exit_code == 0, resumed.stderr
    check_settled_once(tmp_path)


def test_failed_closeout_retries_without_repeating_writeback_or_spend(tmp_path: Path) -> None:
    project(tmp_path, todo_count=2)
    failed = run_once(tmp_path, "--no-follow-up")
    assert failed.exit_code == 18 and "closeout_rejected" in failed.stderr
    key = json.loads((tmp_path / ".loopx/goals/g/runs/index.jsonl").read_text().splitlines()[0])["turn_key"]
    inspection = json.loads(
        run_loopx("turn", "inspect-journal", "-g", "g", "-a", "builder", "-k", key, root=tmp_path).stdout
    )
    assert inspection["journal_status"] == "failed" and inspection["replay_legal"] is True
    assert (
        run_loopx(
            "todo", "block", "-g", "g", "-t", "t2", "--reason", "dropped", root=tmp_path, now=None
        ).exit_code
        == 0
    )
    retried = run_once(tmp_path, "--resume", "--no-follow-up")
    assert retried.exit_code == 0, retried.stderr
    check_settled_once(tmp_path)
    registry = json.loads((tmp_path / ".loopx/registry.json").read_text())
    assert registry["goals"]["g"]["status"] == "done"


def test_failed_validation_marks_the_journal_failed(tmp_path: Path) -> None:
    project(tmp_path)
    bad = run_once(tmp_path, host="true", validate="false")
    assert bad.exit_code == 14 and "writeback_rejected" in bad.stderr
    assert not (tmp_path / ".loopx/goals/g/events.jsonl").exists()
    (tmp_path / "work.log").write_text("fixed by hand\n")  # the owner fixes what validation caught
    good = run_once(tmp_path, "--resume")
    assert good.exit_code == 0, good.stderr
    check_settled_once(tmp_path)


def test_skips_when_should_run_says_so(tmp_path: Path) -> None:
    project(tmp_path)
    run_loopx("goal", "stop", "-g", "g", root=tmp_path, now=None)
    skipped = run_once(tmp_path)
    assert skipped.exit_code == 0 and json.loads(skipped.stdout)["status"] == "skipped"
    assert not (tmp_path / "work.log").exists()


STEP_OF = {
    "validation": ("writeback", 30),
    "durable_writeback": ("writeback", 30),
    "quota_spend": ("quota spend", 7 * 24 * 60),
}
"""Each settlement step a host's command runs: that command, and the lease it leaves (minutes)."""


@pytest.mark.parametrize("step", sorted(STEP_OF))
def test_a_crash_right_after_a_step_keeps_the_lease_it_made(tmp_path: Path, step: str) -> None:
    """The host protocol's commands (not the driver), killed right after `step`'s receipt: the
    todo's lease is the one that step renewed (a spent turn's 7-day hold included), so no other
    agent may take the todo over sooner than had the command finished."""
    project(tmp_path)
    who = ("-g", "g", "-a", "builder")
    begun = run_loopx("turn", "begin", *who, "-t", "t1", root=tmp_path)
    key = json.loads(begun.stdout)["turn_key"]
    later = "2026-11-29T12:20:00Z"  # 20 minutes after the begin (T0): a renewal moves the expiry
    commands = {
        "writeback": ["writeback", *who, "-k", key, "-s", "done", "--validation-status", "passed"],
        "quota spend": ["quota", "spend", *who, "-k", key],
    }
    command, minutes = STEP_OF[step]
    for name, argv in commands.items():
        fault = {"LOOPX_FAULT": f"after:{step}"} if name == command else {}
        done = run_loopx(*argv, root=tmp_path, now=later, env=fault)
        if name == command:
            assert done.exit_code == FAULT_EXIT_CODE, done.stderr
            break
        assert done.exit_code == 0, done.stderr
    todo = json.loads((tmp_path / ".loopx/goals/g/state.json").read_text())["todos"][0]
    expected = datetime.fromisoformat(later) + timedelta(minutes=minutes)
    assert datetime.fromisoformat(todo["lease_expires_at"]) == expected, todo
