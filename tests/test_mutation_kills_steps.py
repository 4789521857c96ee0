"""Mutants of loopx_core/settlement/steps.py that the rest of the suite let live (docs/testing.md).

The terminal closeout's receipt, plan and effect are what a host reads back after settling,
and its refusals are what a person reads: each is checked here as the turn result shows it.
"""

from __future__ import annotations

import pytest

from loopx_core.store.files import FileStore
from tests.conftest import T0, T0_ISO, Cli


@pytest.fixture
def turn(cli: Cli) -> tuple[Cli, str]:
    """Goal `g` with todos t1 and t2, a turn of `builder` on t1 begun; its turn key."""
    cli("goal", "add", "-g", "g", "-o", "Objective")
    cli("agent", "register", "-a", "builder")
    cli("todo", "add", "-g", "g", "--title", "First")
    cli("todo", "add", "-g", "g", "--title", "Second")
    begun = cli("turn", "begin", "-g", "g", "-a", "builder", "-t", "t1")
    assert begun.exit_code == 0, begun.stderr
    return cli, begun.json()["turn_key"]


def closeout(cli: Cli, key: str):  # type: ignore[no-untyped-def]
    """`todo complete --no-follow-up` for the turn, with evidence."""
    return cli(
        "todo",
        "complete",
        "-g",
        "g",
        "-t",
        "t1",
        "-a",
        "builder",
        "-k",
        key,
        "--no-follow-up",
        "--evidence",
        "merged",
    )


def settle(cli: Cli, key: str, *extra: str) -> None:
    """Writeback (with `extra` options) and spend: the receipts a closeout needs."""
    wrote = cli(
        "writeback",
        "-g",
        "g",
        "-a",
        "builder",
        "-k",
        key,
        "-s",
        "done",
        "--validation-status",
        "passed",
        *extra,
    )
    assert wrote.exit_code == 0, wrote.stderr
    assert cli("quota", "spend", "-g", "g", "-a", "builder", "-k", key).exit_code == 0


def test_a_closeout_names_the_receipts_it_still_needs(turn: tuple[Cli, str]) -> None:
    cli, key = turn
    refused = closeout(cli, key)
    assert refused.exit_code == 11
    assert "closeout needs the durable_writeback and quota_spend receipt(s) of this turn" in refused.stderr


def test_a_closeout_names_the_todos_still_open(turn: tuple[Cli, str]) -> None:
    cli, key = turn
    cli("todo", "add", "-g", "g", "--title", "Third")
    settle(cli, key)
    refused = closeout(cli, key)
    assert refused.exit_code == 18
    assert "goal still has open todos (t2, t3): complete without --no-follow-up" in refused.stderr


def test_a_closeout_planned_at_writeback_is_planned_once(turn: tuple[Cli, str]) -> None:
    cli, key = turn
    settle(cli, key, "--no-follow-up")
    cli("todo", "block", "-g", "g", "-t", "t2", "--reason", "out of scope")
    result = closeout(cli, key)
    assert result.exit_code == 0, result.stderr
    assert result.json()["plan"] == ["validation", "durable_writeback", "quota_spend", "terminal_closeout"]


def test_a_closeout_retried_after_a_crash_does_not_close_the_todo_twice(turn: tuple[Cli, str]) -> None:
    """A crash after the todo was closed but before the receipt: the retry adds no evidence again."""
    cli, key = turn
    settle(cli, key)
    cli("todo", "block", "-g", "g", "-t", "t2", "--reason", "out of scope")

    def closed_before_the_crash(state) -> None:  # type: ignore[no-untyped-def]
        todo = state.todo("t1")
        todo.evidence.append("merged")
        todo.end_claim("done", T0)

    FileStore(cli.root).update_goal("g", closed_before_the_crash)
    result = closeout(cli, key)
    assert result.exit_code == 0, result.stderr
    [t1] = [t for t in cli("goal", "show", "-g", "g").json()["state"]["todos"] if t["todo_id"] == "t1"]
    assert (t1["status"], t1["evidence"], t1["updated_at"]) == ("done", ["merged"], T0_ISO)


def test_the_closeout_receipt_plan_and_effect(turn: tuple[Cli, str]) -> None:
    cli, key = turn
    settle(cli, key)
    cli("todo", "block", "-g", "g", "-t", "t2", "--reason", "out of scope")
    result = closeout(cli, key)
    assert result.exit_code == 0, result.stderr
    body = result.json()
    assert body["plan"] == ["validation", "durable_writeback", "quota_spend", "terminal_closeout"]
    assert body["completed_phases"][-1] == "terminal_closeout" and body["next_phase"] is None
    [receipt] = body["receipts"]
    assert receipt["step"] == "terminal_closeout"
    assert receipt["idempotency_key"].endswith(":terminal_closeout")
    assert receipt["detail"] == {"todo_id": "t1", "goal_status": "done"}
    assert body["effects"] == ["closeout:t1"]
    shown = cli("goal", "show", "-g", "g").json()
    assert shown["goal"]["status"] == "done"
    [t1] = [t for t in shown["state"]["todos"] if t["todo_id"] == "t1"]
    assert (t1["status"], t1["claimed_by"], t1["evidence"]) == ("done", None, ["merged"])
    again = closeout(cli, key)  # a replay: the same receipt, nothing written twice
    assert again.exit_code == 0 and again.json()["receipts"][0]["replayed"] is True
    [t1] = [t for t in cli("goal", "show", "-g", "g").json()["state"]["todos"] if t["todo_id"] == "t1"]
    assert t1["evidence"] == ["merged"]


@pytest.mark.parametrize(("command", "why"), [(None, "reported failed"), ("exit 3", "`exit 3` exited 3")])
def test_a_failed_validation_says_why_in_words(tmp_path, command: str | None, why: str) -> None:  # type: ignore[no-untyped-def]
    from loopx_core.errors import SettlementError
    from loopx_core.kernel.algebra import StepKind
    from loopx_core.settlement.steps import TurnContext
    from loopx_core.settlement.turns import begin_turn, settle_steps
    from tests.builders import build_project

    store = build_project(tmp_path)
    journal, _ = begin_turn(store, "g", "builder", T0, todo_id="t1")
    ctx = TurnContext(
        store, "g", "builder", journal.turn_key, lambda: T0, summary="s",
        validation_passed=False, validation_command=command,
    )  # fmt: skip
    with pytest.raises(SettlementError) as refused:
        settle_steps(ctx, [StepKind.VALIDATION], adapter="test")
    assert refused.value.message == f"writeback_rejected: validation failed: {why}; nothing was written back"


def test_a_closed_turn_frees_the_agent_s_slot_and_a_spent_one_holds_its_todo(turn: tuple[Cli, str]) -> None:
    """Spent but not completed: the todo is held for 7 days and the slot kept; closed: both freed."""
    from datetime import timedelta

    from loopx_core.ops.lease import SETTLED_HOLD_MINUTES

    cli, key = turn
    settle(cli, key)  # committed at the spend: the closeout comes with `todo complete`
    state = FileStore(cli.root).read_goal("g")
    assert state.todo("t1").lease_expires_at == T0 + timedelta(minutes=SETTLED_HOLD_MINUTES)  # type: ignore[union-attr]
    assert state.open_turns == {"builder": key}
    cli("todo", "block", "-g", "g", "-t", "t2", "--reason", "out of scope")
    assert closeout(cli, key).exit_code == 0
    assert FileStore(cli.root).read_goal("g").open_turns == {}


def test_the_validation_receipt_says_what_the_host_reported(turn: tuple[Cli, str]) -> None:
    cli, key = turn
    settle(cli, key, "--evidence", "ci green")
    phase = FileStore(cli.root).read_journal("g", key).phase("validation")
    assert phase is not None and phase.receipt == {"reported": "passed", "evidence": ["ci green"]}


def test_a_journal_whose_key_or_identity_was_changed_is_refused(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from loopx_core.kernel.algebra import FailureKind
    from loopx_core.settlement.steps import TurnContext, guard
    from loopx_core.settlement.turns import begin_turn
    from tests.builders import build_project

    store = build_project(tmp_path, todo_count=2)
    journal, _ = begin_turn(store, "g", "builder", T0, todo_id="t1")
    ctx = TurnContext(store, "g", "builder", journal.turn_key, lambda: T0)
    assert guard(ctx, journal) is None
    other_key = journal.replace(turn_key="sha256:" + "0" * 64)
    other_identity = journal.replace(identity={**journal.identity, "turn_instance_id": "forged"})
    for tampered in (other_key, other_identity):
        assert guard(ctx, tampered) == (
            FailureKind.INVALID_IDENTITY,
            "the journal's identity does not hash to its turn key",
        )
