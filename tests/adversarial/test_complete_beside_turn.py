"""Class: a todo an open turn is advancing is completed beside that turn, not through it.

`turn begin` then `todo complete` once settled the work with nothing charged (no writeback,
`spent_slots` 0) and left the turn to die on a lost lease. Now, at every state of the turn
before its spend (begun; validation journaled; written back), completion is refused with the
settlement exit code of the step that is missing, one line naming the commands that settle or
give up the turn, and nothing written; the named commands then settle it with one spend. Once
the turn is committed, or when another todo is completed, completion works as before. The
CLI and the MCP tool call the same `ops.todos.complete_todo`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from loopx_core.errors import ExitCode, SettlementError
from loopx_core.kernel.algebra import StepKind
from loopx_core.ops import todos
from loopx_core.quota import compute_usage
from tests.builders import SETTLE, build_project, settle_turn, tree
from tests.conftest import T0, run_loopx

UNSETTLED = {
    "begun": ((), ExitCode.WRITEBACK_MISSING),
    "validated": ((StepKind.VALIDATION,), ExitCode.WRITEBACK_MISSING),
    "written back": ((StepKind.VALIDATION, StepKind.DURABLE_WRITEBACK), ExitCode.RECEIPT_MISSING),
}


def _spent(store: object) -> int:
    goal = store.read_registry().goals["g"]  # type: ignore[attr-defined]
    return compute_usage(goal.quota, store.ledger_since("g", T0.replace(year=2000)), T0).spent_slots  # type: ignore[attr-defined]


@pytest.mark.parametrize("state", list(UNSETTLED))
def test_completion_in_process_is_refused_until_the_turn_settles(tmp_path: Path, state: str) -> None:
    steps, code = UNSETTLED[state]
    store = build_project(tmp_path, todo_count=2)
    journal = settle_turn(store, "builder", "t1", steps=steps)
    before = tree(tmp_path)
    with pytest.raises(SettlementError) as refused:
        todos.complete_todo(store, "g", "t1", T0, agent_id="builder", evidence=["done"])
    assert refused.value.exit_code == code
    assert "loopx turn cancel" in refused.value.message and journal.turn_key in refused.value.message
    assert tree(tmp_path) == before
    # Another todo is not this turn's: the owner completes it as before (a human todo).
    assert store.read_goal("g").todo("t1").claimed_by == "builder"
    # The named way settles the work, with one charge, and completes the todo.
    rest = [s for s in SETTLE if s not in steps]
    from loopx_core.settlement.steps import TurnContext
    from loopx_core.settlement.turns import settle_steps

    ctx = TurnContext(
        store, "g", "builder", journal.turn_key, lambda: T0, summary="s", validation_passed=True, slots=1
    )
    settle_steps(ctx, rest, adapter="test")
    done = todos.complete_todo(store, "g", "t1", T0, agent_id="builder", evidence=["done"])
    assert done.status == "done" and _spent(store) == 1
    assert "builder" not in store.read_goal("g").open_turns


def test_a_committed_turn_completes_as_before(tmp_path: Path) -> None:
    store = build_project(tmp_path)
    settle_turn(store, "builder", "t1")
    assert todos.complete_todo(store, "g", "t1", T0, agent_id="builder").status == "done"
    assert _spent(store) == 1 and "builder" not in store.read_goal("g").open_turns


def test_a_cancelled_turn_leaves_nothing_to_complete_by_its_agent(tmp_path: Path) -> None:
    from loopx_core.settlement.turns import cancel_turn

    store = build_project(tmp_path)
    journal = settle_turn(store, "builder", "t1", steps=())
    cancel_turn(store, "g", "builder", journal.turn_key, T0, "changed my mind")
    with pytest.raises(Exception, match="not claimed by 'builder'"):
        todos.complete_todo(store, "g", "t1", T0, agent_id="builder")
    assert _spent(store) == 0


@pytest.mark.parametrize("state", list(UNSETTLED))
def test_the_cli_refuses_in_one_line_and_its_advice_settles(tmp_path: Path, state: str) -> None:
    steps, code = UNSETTLED[state]
    store = build_project(tmp_path)
    journal = settle_turn(store, "builder", "t1", steps=steps)
    before = tree(tmp_path)
    out = run_loopx("todo", "complete", "-g", "g", "-t", "t1", "-a", "builder", "-e", "ok", root=tmp_path)
    assert out.exit_code == code, out
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and str(tmp_path) not in lines[0]
    assert journal.turn_key in lines[0] and "loopx turn spend" in lines[0]
    assert tree(tmp_path) == before
    if StepKind.DURABLE_WRITEBACK not in steps:
        written = run_loopx(
            "turn", "writeback", "-g", "g", "-a", "builder", "-k", journal.turn_key, "-s", "done",
            "--validation-status", "passed", root=tmp_path,
        )  # fmt: skip
        assert written.exit_code == 0, written
    spent = run_loopx("turn", "spend", "-g", "g", "-a", "builder", "-k", journal.turn_key, root=tmp_path)
    assert spent.exit_code == 0, spent
    done = run_loopx("todo", "complete", "-g", "g", "-t", "t1", "-a", "builder", "-e", "ok", root=tmp_path)
    assert done.exit_code == 0, done
    assert store.read_goal("g").todo("t1").status == "done" and _spent(store) == 1
