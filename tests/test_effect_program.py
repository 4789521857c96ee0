"""Ordered effect programs: the three execution modes, each as documented, and the turn driver
executing a turn's serial program step by step, every step settled before the next starts."""

from __future__ import annotations

import json
import shlex
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loopx_core.effects.program import (
    MAX_PARALLEL,
    EffectProgram,
    EffectStep,
    effect_program_from_ordered_steps,
    execute,
)
from loopx_core.errors import SettlementError
from loopx_core.settlement.driver import DriverOptions, run_once
from tests.builders import build_project, run_once_words
from tests.conftest import T0


class Boom(Exception):
    """A step that fails."""


def _program(count: int, mode: str | None) -> EffectProgram:
    return effect_program_from_ordered_steps([f"loopx step {n}" for n in range(count)], mode)  # type: ignore[arg-type]


def _runner(fail_at: set[int], log: list[str]):  # type: ignore[no-untyped-def]
    def run(step: EffectStep) -> None:
        log.append(step.step_id)
        if int(step.step_id[1:]) - 1 in fail_at:
            raise Boom(step.step_id)

    return run


@given(count=st.integers(0, 12), fail_at=st.sets(st.integers(0, 11), max_size=3))
def test_serial_runs_in_order_and_stops_at_the_first_failure(count: int, fail_at: set[int]) -> None:
    log: list[str] = []
    first = min((i for i in fail_at if i < count), default=None)
    program = _program(count, "serial")
    if first is None:
        assert execute(program, _runner(fail_at, log)) == tuple(s.step_id for s in program.steps)
    else:
        with pytest.raises(Boom, match=f"s{first + 1}$"):
            execute(program, _runner(fail_at, log))
    assert log == [f"s{n + 1}" for n in range(count if first is None else first + 1)]


@given(count=st.integers(0, 12), fail_at=st.sets(st.integers(0, 11), max_size=3))
def test_interleaved_runs_the_callers_work_between_steps(count: int, fail_at: set[int]) -> None:
    log: list[str] = []
    first = min((i for i in fail_at if i < count), default=None)
    program = _program(count, "interleaved")
    between = lambda done, nxt: log.append(f"{done.step_id}>{nxt.step_id}")  # noqa: E731
    try:
        execute(program, _runner(fail_at, log), between=between)
    except Boom:
        assert first is not None
    ran = count if first is None else first + 1
    expected: list[str] = []
    for n in range(1, ran + 1):
        if n > 1:
            expected.append(f"s{n - 1}>s{n}")
        expected.append(f"s{n}")
    assert log == expected


@given(count=st.integers(0, 20), fail_at=st.sets(st.integers(0, 19), max_size=3))
def test_parallel_runs_every_step_and_raises_the_first_failure_in_step_order(
    count: int, fail_at: set[int]
) -> None:
    log: list[str] = []
    lock = threading.Lock()
    running = [0, 0]  # now, most at once

    def run(step: EffectStep) -> None:
        with lock:
            running[0] += 1
            running[1] = max(running[1], running[0])
        try:
            _runner(fail_at, log)(step)
        finally:
            with lock:
                running[0] -= 1

    first = min((i for i in fail_at if i < count), default=None)
    program = _program(count, "parallel")
    if first is None:
        assert execute(program, run) == tuple(s.step_id for s in program.steps)
    else:
        with pytest.raises(Boom, match=f"s{first + 1}$"):
            execute(program, run)
    assert sorted(log) == sorted(f"s{n + 1}" for n in range(count))  # a failure stops no other step
    assert running[1] <= MAX_PARALLEL


def test_parallel_steps_do_run_at_the_same_time() -> None:
    barrier = threading.Barrier(3, timeout=10)
    execute(_program(3, "parallel"), lambda step: barrier.wait() and None)  # all three meet, or it times out


def test_a_program_without_a_mode_is_not_run() -> None:
    ran: list[EffectStep] = []
    with pytest.raises(ValueError, match="no execution_mode"):
        execute(_program(2, None), ran.append)
    assert ran == []
    assert effect_program_from_ordered_steps(["loopx x"], "sideways").execution_mode is None  # type: ignore[arg-type]


def test_the_driver_settles_each_step_before_the_next(tmp_path: Path) -> None:
    """run-once executes the turn's serial program: when the validation step runs, the journal
    holds exactly the steps before it, and the phases end in program order."""
    store = build_project(tmp_path / "p")
    turns = store.goal_dir("g") / "turns"
    seen = tmp_path / "seen.json"
    snoop = (
        "import glob, json; [path] = glob.glob(" + repr(str(turns / "*.json")) + "); "
        "json.dump([p['phase'] for p in json.load(open(path))['phases']], open(" + repr(str(seen)) + ", 'w'))"
    )
    options = DriverOptions(host_command="true", validation_command=shlex.join([sys.executable, "-c", snoop]))
    packet = run_once(store, "g", "builder", options, lambda: T0)
    assert packet["status"] == "committed", packet
    assert json.loads(seen.read_text()) == ["host_execute", "typed_result"]
    phases = [p.phase for p in store.read_journal("g", packet["turn_key"]).phases]
    assert phases == ["host_execute", "typed_result", "validation", "durable_writeback", "quota_spend"]
    assert packet["remaining_phases"] == [] and "execution_mode" not in packet


def test_the_driver_stops_at_a_failing_step_and_resume_runs_only_the_rest(tmp_path: Path) -> None:
    store = build_project(tmp_path / "p")
    flag = tmp_path / "pass"
    check = shlex.join(
        [sys.executable, "-c", f"import os, sys; sys.exit(0 if os.path.exists({str(flag)!r}) else 1)"]
    )
    options = DriverOptions(host_command="true", validation_command=check)
    with pytest.raises(SettlementError):
        run_once(store, "g", "builder", options, lambda: T0)
    key = store.read_goal("g").open_turns["builder"]
    failed = store.read_journal("g", key)
    assert [p.phase for p in failed.phases] == ["host_execute", "typed_result"]  # nothing after the failure
    flag.touch()
    options.resume = True
    packet = run_once(store, "g", "builder", options, lambda: T0)
    assert packet["status"] == "committed"
    phases = [p.phase for p in store.read_journal("g", key).phases]
    assert phases == ["host_execute", "typed_result", "validation", "durable_writeback", "quota_spend"]


def test_turn_result_program_snapshot(tmp_path: Path, snapshot_json) -> None:  # type: ignore[no-untyped-def]
    """The turn result's program, as a begun turn and a turn past its host phases declare it."""
    from loopx_core.effects.lens import interpret_turn_result_packet
    from loopx_core.kernel.results import turn_result
    from tests.turns import begun_turn

    turn = begun_turn(tmp_path)
    journal = turn.store.read_journal("g", turn.key)
    seen = {}
    for label in ("begun", "host_done"):
        packet = turn_result(journal)
        program = interpret_turn_result_packet(packet).next_effect.program
        assert program is not None
        seen[label] = {
            "execution_mode": packet["execution_mode"],
            "next_phase": packet["next_phase"],
            "remaining_phases": packet["remaining_phases"],
            "program": [vars(step) for step in program.steps],
        }
        for phase in ("host_execute", "typed_result"):
            journal.record(phase, journal.updated_at, {})
    assert seen == snapshot_json


def test_a_step_that_plans_another_is_run_too(tmp_path: Path) -> None:
    """`--no-follow-up`: the writeback step plans terminal_closeout, which the driver then runs
    (the program is read again after every step), so the goal closes."""
    store = build_project(tmp_path / "p")
    options = DriverOptions(host_command="true", validation_command="true", no_followup=True)
    packet = run_once(store, "g", "builder", options, lambda: T0)
    assert packet["status"] == "committed" and packet["remaining_phases"] == []
    assert "terminal_closeout" in packet["completed_phases"]
    assert store.read_registry().goals["g"].status == "done"


def test_a_host_command_that_settles_phases_itself(tmp_path: Path) -> None:
    """The host command writes the turn back itself: the driver skips what the journal already
    holds and finishes the turn (no phase runs twice)."""
    store = build_project(tmp_path / "p")
    loopx = Path(sys.executable).parent / "loopx"
    writeback = (
        f"{shlex.quote(str(loopx))} writeback --goal-id $LOOPX_GOAL_ID --agent-id $LOOPX_AGENT_ID "
        "--turn-key $LOOPX_TURN_KEY --summary done --validation-status passed --evidence ok"
    )
    options = DriverOptions(host_command=writeback, validation_command="true")
    packet = run_once(store, "g", "builder", options, lambda: T0)
    assert packet["status"] == "committed", packet
    phases = [p.phase for p in store.read_journal("g", packet["turn_key"]).phases]
    assert len(phases) == len(set(phases)) and phases[-1] == "quota_spend"


def test_an_unknown_mode_runs_nothing() -> None:
    ran: list[EffectStep] = []
    with pytest.raises(ValueError, match="no execution_mode"):
        execute(EffectProgram((EffectStep("a", "cli"),), "bogus"), ran.append)  # type: ignore[arg-type]
    assert ran == []


def _loopx_env(root: Path) -> dict[str, str]:
    import os

    env = {**os.environ, "LOOPX_ROOT": str(root)}
    env.pop("LOOPX_NOW", None)
    return env


def test_concurrent_run_once_runs_the_host_command_once(tmp_path: Path) -> None:
    """Four `run-once` for one agent at once: one runs the host command and settles, the others
    are refused (exit 7) before running anything: the host's side effect happens once."""
    import subprocess

    root = tmp_path / "p"
    build_project(root)
    log = tmp_path / "log.txt"
    loopx = str(Path(sys.executable).parent / "loopx")
    argv = [
        loopx,
        "turn",
        "run-once",
        "-g",
        "g",
        "-a",
        "builder",
        "-f",
        "json",
        "--validation-command",
        "true",
    ]
    argv += ["--host-command", f"echo ran >> {shlex.quote(str(log))}; sleep 1"]
    racers = [
        subprocess.Popen(argv, env=_loopx_env(root), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(4)
    ]
    codes = sorted(p.wait(timeout=60) for p in racers)
    assert log.read_text().splitlines() == ["ran"], codes
    assert codes.count(0) == 1 and set(codes) <= {0, 5, 7}, codes


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGINT"])
def test_a_stopped_run_once_stops_its_host_command(tmp_path: Path, signame: str) -> None:
    """SIGTERM (or SIGINT to loopx alone) while the host command runs: loopx says so, exits 130,
    and nothing of the host command (its whole process group) runs on; --resume finishes."""
    import signal
    import subprocess
    import time

    root = tmp_path / "p"
    build_project(root)
    done = tmp_path / "done.txt"
    started = tmp_path / "started.txt"
    host = f"touch {shlex.quote(str(started))}; sleep 2; echo finished >> {shlex.quote(str(done))}"
    loopx = str(Path(sys.executable).parent / "loopx")
    argv = [
        loopx,
        *run_once_words(host),
    ]
    proc = subprocess.Popen(
        argv, env=_loopx_env(root), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 20
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(getattr(signal, signame))
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and "loopx: interrupted" in err, (proc.returncode, err)
    time.sleep(3)
    assert not done.exists()  # the host command's sleep and echo were stopped with loopx
    resumed = subprocess.run(
        [*argv[:7], "--resume", "--host-command", "true", "--validation-command", "true", "-f", "json"],
        env=_loopx_env(root), capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
