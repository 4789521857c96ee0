"""A settlement command through the lean store does exactly what it does through pydantic's.

The settlement commands read and write lean objects (`store.lean_store.LeanSettleStore`); every
other caller uses the pydantic models (`FileStore`). On generated scripts of turn operations
(begin, host writeback, spend, completion, closeout, cancel, lease renewal, time passing, with
odd numbers and any text), two copies of one project, one through each store, give the same
result or the same error after every operation, and leave byte-identical files.
"""

from __future__ import annotations

import shutil
from datetime import timedelta
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.errors import LoopxError
from loopx_core.kernel.algebra import StepKind
from loopx_core.kernel.results import turn_result
from loopx_core.ops import goals, todos
from loopx_core.settlement import turns
from loopx_core.settlement.steps import TurnContext
from loopx_core.store.files import FileStore
from loopx_core.store.lean_store import LeanSettleStore
from tests.builders import tree
from tests.conftest import T0

AGENTS = ("builder", "other")
TODOS = ("t1", "t2", "t3")
MINUTES = [1e-7, 0.1, 0.5, 1.0, 2.5, 30.0, 59.99, 1e3, 1_576_800.0, 0.0, -1.0, float("nan"), float("inf")]
TEXT = st.one_of(
    st.sampled_from(["", " ", "did it", "é ü \u2028 \x1f \x7f", "\U0001f600", "x" * 300]),
    st.text(max_size=40),
)
OPS = st.one_of(
    st.tuples(
        st.just("begin"), st.sampled_from(AGENTS), st.sampled_from((*TODOS, None)), st.sampled_from(MINUTES)
    ),
    st.tuples(
        st.just("writeback"),
        st.sampled_from(AGENTS),
        TEXT,
        st.lists(TEXT, max_size=2),
        st.sampled_from([True, False, None]),
        st.one_of(st.none(), TEXT),
        st.booleans(),
    ),
    st.tuples(st.just("spend"), st.sampled_from(AGENTS), st.sampled_from([None, 1, 2, 0, 10**6])),
    st.tuples(
        st.just("complete"), st.sampled_from(AGENTS), st.sampled_from(TODOS), st.lists(TEXT, max_size=2)
    ),
    st.tuples(st.just("closeout"), st.sampled_from(AGENTS)),
    st.tuples(st.just("cancel"), st.sampled_from(AGENTS), st.one_of(st.none(), TEXT)),
    st.tuples(st.just("renew"), st.sampled_from(AGENTS), st.sampled_from([None, *MINUTES])),
    st.tuples(st.just("wait"), st.sampled_from([1, 29, 31, 90, 60 * 24 * 8])),
)


def _project(root: Path) -> None:
    store = FileStore(root)
    store.init()
    goals.add_goal(store, "g", "Objective", T0, compute=0.5, slot_minutes=5.0, no_progress_limit=2)
    for agent in AGENTS:
        goals.register_agent(store, agent, [], T0)
    for n, _ in enumerate(TODOS):
        todos.add_todo(store, "g", f"Todo {n + 1}", T0)


def _open_turn(store: Any, agent: str) -> str | None:
    return store.read_goal("g").open_turns.get(agent)


def _apply(store: Any, op: tuple[Any, ...], now: Any) -> Any:
    """One operation on `store` at `now`: its JSON result (or None)."""
    kind, *args = op
    if kind == "begin":
        agent, todo, minutes = args
        journal, replayed = turns.begin_turn(
            store, "g", agent, now, todo_id=todo, replan=todo is None, lease_minutes=minutes
        )
        return turn_result(journal), replayed
    if kind == "complete":
        agent, todo, evidence = args
        return todos.complete_todo(store, "g", todo, now, agent_id=agent, evidence=evidence).todo_id
    key = _open_turn(store, args[0])
    if key is None:
        return "no open turn"
    ctx = TurnContext(store, "g", args[0], key, lambda: now)
    if kind == "writeback":
        _, summary, evidence, passed, no_progress, no_followup = args
        ctx.summary, ctx.evidence, ctx.validation_passed = summary, evidence, passed
        ctx.no_progress, ctx.no_followup = no_progress, no_followup
        return turns.writeback_turn(ctx, adapter="cli")
    if kind == "spend":
        ctx.slots = args[1]
        return turns.settle_steps(ctx, [StepKind.QUOTA_SPEND], adapter="cli")
    if kind == "closeout":
        return turns.settle_steps(ctx, [StepKind.TERMINAL_CLOSEOUT], adapter="cli")
    if kind == "cancel":
        journal = turns.cancel_turn(store, "g", args[0], key, now, args[1])
        return None if journal is None else journal.status
    return turns.renew_turn_lease(store, "g", args[0], key, now, args[1])


def _outcome(store: Any, op: tuple[Any, ...], now: Any) -> Any:
    try:
        return ("ok", _apply(store, op, now))
    except LoopxError as error:
        return ("error", type(error).__name__, str(error), error.exit_code)
    except Exception as error:  # an internal error must at least be the same one
        return ("internal", type(error).__name__)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(OPS, min_size=1, max_size=14))
def test_a_script_of_turns_writes_the_same_bytes_through_both_stores(
    tmp_path: Path, script: list[tuple[Any, ...]]
) -> None:
    base = tmp_path / "base"
    if not base.exists():
        _project(base)
    slow_root, lean_root = tmp_path / "slow", tmp_path / "lean"
    for root in (slow_root, lean_root):
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(base, root)
    slow, lean = FileStore(slow_root), LeanSettleStore(lean_root)
    now = T0
    for op in script:
        if op[0] == "wait":
            now += timedelta(minutes=op[1])
            continue
        expected = _outcome(slow, op, now)
        assert _outcome(lean, op, now) == expected, op
        assert tree(lean_root) == tree(slow_root), op
