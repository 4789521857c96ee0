"""Class: exactly-once that does not depend on time (the receipt index, not a lookback).

A crash between an effect and its receipt, resumed days later (after the quota window has
passed, after dozens of other runs), must find the first effect: one spend, one history
line per turn, for as long as the goal exists.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core import faults as fault
from loopx_core.clock import iso
from loopx_core.kernel.algebra import StepKind
from loopx_core.ops import spend, todos
from loopx_core.settlement.steps import TurnContext
from loopx_core.settlement.turns import begin_turn, settle_steps
from tests.builders import build_project
from tests.conftest import T0, T0_ISO, run_loopx

LATE = T0 + timedelta(hours=100)  # four windows of 24 h later


def _spends(root: Path) -> list[dict]:  # type: ignore[type-arg]
    path = root / ".loopx/goals/g/events.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    return [e for e in map(json.loads, lines) if e["kind"] == "spend"]


def _history(root: Path) -> list[str]:
    path = root / ".loopx/goals/g/runs/index.jsonl"
    return [json.loads(line)["run_id"] for line in path.read_text().splitlines()] if path.exists() else []


def test_cli_spend_crashed_before_its_receipt_and_retried_days_later_charges_once(tmp_path: Path) -> None:
    build_project(tmp_path)
    begun = run_loopx("turn", "begin", "-g", "g", "-a", "builder", "-t", "t1", root=tmp_path)
    key = json.loads(begun.stdout)["turn_key"]
    wb = [
        "writeback",
        "-g",
        "g",
        "-a",
        "builder",
        "-k",
        key,
        "--summary",
        "s",
        "--validation-status",
        "passed",
    ]
    assert run_loopx(*wb, root=tmp_path).exit_code == 0
    crashed = run_loopx(
        "quota", "spend", "-g", "g", "-a", "builder", "-k", key, root=tmp_path,
        env={"LOOPX_FAULT": "before_receipt:quota_spend"},
    )  # fmt: skip
    assert crashed.exit_code == fault.FAULT_EXIT_CODE
    retried = run_loopx("quota", "spend", "-g", "g", "-a", "builder", "-k", key, root=tmp_path, now=iso(LATE))
    assert retried.exit_code == 0, retried.stderr
    assert len(_spends(tmp_path)) == 1


def test_driver_resumed_after_the_window_charges_once(tmp_path: Path) -> None:
    build_project(tmp_path)
    run = [
        "turn",
        "run-once",
        "-g",
        "g",
        "-a",
        "builder",
        "--host-command",
        "true",
        "--validation-command",
        "true",
    ]
    crashed = run_loopx(*run, root=tmp_path, now=T0_ISO, env={"LOOPX_FAULT": "before_receipt:quota_spend"})
    assert crashed.exit_code == fault.FAULT_EXIT_CODE
    resumed = run_loopx(*run, "--resume", root=tmp_path, now=iso(LATE))
    assert resumed.exit_code == 0, resumed.stderr
    assert len(_spends(tmp_path)) == 1
    assert len(_history(tmp_path)) == 1


def test_manual_spend_with_an_instance_id_is_once_for_the_goals_life(tmp_path: Path) -> None:
    store = build_project(tmp_path)
    first = spend.spend(store, "g", "builder", T0, slots=1, turn_instance_id="owner-1")
    for days in (2, 30, 400):
        again = spend.spend(
            store, "g", "builder", T0 + timedelta(days=days), slots=1, turn_instance_id="owner-1"
        )
        assert again.replayed and again.event.event_id == first.event.event_id
    assert len(_spends(tmp_path)) == 1


def test_void_twice_years_apart_voids_once(tmp_path: Path) -> None:
    store = build_project(tmp_path)
    charged = spend.spend(store, "g", "builder", T0, slots=1)
    first = spend.void(store, "g", charged.event.event_id, T0)
    again = spend.void(store, "g", charged.event.event_id, T0 + timedelta(days=900))
    assert again.replayed and again.event.event_id == first.event.event_id


@pytest.mark.parametrize("damage", ["missing", "garbage", "empty", "wrong-offsets"])
def test_a_damaged_receipt_index_is_rebuilt_from_the_ledger(tmp_path: Path, damage: str) -> None:
    store = build_project(tmp_path)
    spend.spend(store, "g", "builder", T0, slots=1, turn_instance_id="i-1")
    spend.spend(store, "g", "builder", T0, slots=1, turn_instance_id="i-2")
    index = store.receipts_path("g")
    if damage == "missing":
        index.unlink()
    elif damage == "garbage":
        index.write_bytes(b"\x00{not json")
    elif damage == "empty":
        index.write_bytes(b"")
    else:  # offsets swapped: the index points at the wrong lines
        data = json.loads(index.read_text())
        data["spends"] = {"i-1": data["spends"]["i-2"], "i-2": data["spends"]["i-1"]}
        index.write_text(json.dumps(data))
    for instance in ("i-1", "i-2"):
        assert spend.spend(store, "g", "builder", LATE, slots=1, turn_instance_id=instance).replayed
    assert len(_spends(tmp_path)) == 2


def test_a_newer_receipt_index_is_refused_and_left_unchanged(tmp_path: Path) -> None:
    store = build_project(tmp_path)
    spend.spend(store, "g", "builder", T0, slots=1, turn_instance_id="i-1")
    index = store.receipts_path("g")
    index.write_text(json.dumps({"schema_version": 2, "spends": {}}))
    before = index.read_bytes()
    result = run_loopx(
        "quota", "spend", "-g", "g", "-a", "builder", "--manual", "--slots", "1",
        "--turn-instance-id", "i-1", root=tmp_path,
    )  # fmt: skip
    assert result.exit_code == 8, result.stderr
    assert "Traceback" not in result.stderr and str(tmp_path) not in result.stderr + result.stdout
    assert index.read_bytes() == before
    assert len(_spends(tmp_path)) == 1


def test_a_directory_in_place_of_the_receipt_index_is_refused_without_a_traceback(tmp_path: Path) -> None:
    store = build_project(tmp_path)
    spend.spend(store, "g", "builder", T0, slots=1, turn_instance_id="i-1")
    store.receipts_path("g").unlink()
    store.receipts_path("g").mkdir()
    result = run_loopx(
        "quota", "spend", "-g", "g", "-a", "builder", "--manual", "--slots", "1",
        "--turn-instance-id", "i-1", root=tmp_path,
    )  # fmt: skip
    assert result.exit_code == 4, result.stderr
    assert "Traceback" not in result.stderr and str(tmp_path) not in result.stderr
    assert len(_spends(tmp_path)) == 1


class _Crash(BaseException):
    """Stands for the process dying: no handler catches it, no receipt is written."""


phases = st.sampled_from(
    [(m, p) for m in ("before_receipt", "after") for p in ("durable_writeback", "quota_spend")]
)


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    crashes=st.lists(st.tuples(phases, st.integers(0, 3000), st.integers(0, 6)), min_size=1, max_size=4),
)
def test_crashes_resumed_any_time_later_settle_each_turn_once(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, crashes: list
) -> None:  # type: ignore[type-arg]
    """Each turn crashes once, other turns run meanwhile, then it resumes hours or months later."""
    root = tmp_path_factory.mktemp("late")
    store = build_project(root, todo_count=len(crashes) + sum(others for _, _, others in crashes))
    clock = [T0]
    next_todo = iter(range(1, 1000))

    def settle(agent: str, key: str) -> None:
        ctx = TurnContext(
            store, "g", agent, key, lambda: clock[0], summary="s", validation_passed=True, slots=1
        )
        settle_steps(
            ctx, [StepKind.VALIDATION, StepKind.DURABLE_WRITEBACK, StepKind.QUOTA_SPEND], adapter="t"
        )
        todo_id = store.read_journal("g", key).identity["todo_id"]
        todos.complete_todo(store, "g", todo_id, clock[0], agent_id=agent)  # the protocol's last step

    for (moment, phase), hours_later, others in crashes:
        journal, _ = begin_turn(store, "g", "builder", clock[0], todo_id=f"t{next(next_todo)}")

        def die(at: str, where: str, target: tuple[str, str] = (moment, phase)) -> None:
            if (at, where) == target:
                raise _Crash

        monkeypatch.setattr(fault, "point", die)
        with pytest.raises(_Crash):
            settle("builder", journal.turn_key)
        monkeypatch.undo()
        for _ in range(others):  # the other agent settles whole turns meanwhile
            clock[0] += timedelta(minutes=5)
            other, _ = begin_turn(store, "g", "other", clock[0], todo_id=f"t{next(next_todo)}")
            settle("other", other.turn_key)
        clock[0] += timedelta(hours=hours_later)
        settle("builder", journal.turn_key)  # the resume, however late
    spends = _spends(root)
    assert (
        len(spends)
        == len({s["turn_instance_id"] for s in spends})
        == len(crashes) + sum(o for _, _, o in crashes)
    )
    history = _history(root)
    assert len(history) == len(set(history)) == len(spends)


def test_an_index_offset_into_the_middle_of_a_line_is_rebuilt_not_an_error(tmp_path: Path) -> None:
    store = build_project(tmp_path)
    first = spend.spend(store, "g", "builder", T0, slots=1, turn_instance_id="t-1")
    size = store.ledger_path("g").stat().st_size
    store.receipts_path("g").write_text(
        json.dumps({"schema_version": 1, "ledger_offset": size, "spends": {"t-1": 5}})
    )
    found = store.spend_receipt("g", "t-1")
    assert found is not None and found.event_id == first.event.event_id
