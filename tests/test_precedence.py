"""The seven states' precedence has one source: `EVALUATION_ORDER`, walked by `assess()`.

Every subset of the six blocking conditions is set up at once on a real store (64 goals);
the state should-run answers is the earliest in `EVALUATION_ORDER` whose condition holds,
or `eligible` when none does. Moving any check before another fails a case.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import combinations
from pathlib import Path

import pytest

from loopx_core.decide.assess import CHECKS, assess
from loopx_core.decide.packet import load_inputs
from loopx_core.models.records import HealthFinding
from loopx_core.ops import gates, goals, spend, todos
from loopx_core.quota import EVALUATION_ORDER
from loopx_core.store.files import FileStore
from tests.conftest import T0


def _paused(store: FileStore) -> None:
    goals.set_goal_status(store, "g", "stopped", T0)


def _blocked_health(store: FileStore) -> None:
    def add(state):  # type: ignore[no-untyped-def]
        state.health.append(HealthFinding(code="disk_full", severity="high", message="no space"))

    store.update_goal("g", add)


def _operator_gate(store: FileStore) -> None:
    gates.open_gate(store, "g", "Approve the release", T0)


def _focus_wait(store: FileStore) -> None:
    gates.focus_wait(store, "g", "CI is running", T0, for_minutes=60)


def _throttled(store: FileStore) -> None:
    spend.spend(store, "g", "other", T0, slots=24)  # 24 of 24 slots of the window: exhausted


def _waiting(store: FileStore) -> None:
    todos.add_todo(store, "g", "Only for other", T0, bound_agent="other")  # nothing in builder's scope


CONDITIONS: dict[str, Callable[[FileStore], None]] = {
    "paused": _paused,
    "blocked_health": _blocked_health,
    "operator_gate": _operator_gate,
    "focus_wait": _focus_wait,
    "throttled": _throttled,
    "waiting": _waiting,
}
SUBSETS = [c for n in range(len(CONDITIONS) + 1) for c in combinations(CONDITIONS, n)]


def _project(root: Path, conditions: tuple[str, ...]) -> FileStore:
    store = FileStore(root)
    store.init()
    goals.add_goal(store, "g", "Objective", T0, window_hours=24, slot_minutes=60)
    goals.register_agent(store, "builder", [], T0)
    goals.register_agent(store, "other", [], T0)
    if "waiting" not in conditions:
        todos.add_todo(store, "g", "Work for builder", T0)
    for name in EVALUATION_ORDER:  # set up in a fixed order: a condition never hides another's setup
        if name in conditions:
            CONDITIONS[name](store)
    return store


def test_every_state_has_one_check_and_the_order_covers_them() -> None:
    assert list(CHECKS) == list(EVALUATION_ORDER)
    assert set(CONDITIONS) | {"eligible"} == set(EVALUATION_ORDER)


@pytest.mark.parametrize("conditions", SUBSETS, ids=lambda c: "+".join(c) or "none")
def test_the_earliest_condition_in_evaluation_order_wins(tmp_path: Path, conditions: tuple[str, ...]) -> None:
    store = _project(tmp_path, conditions)
    expected = next((s for s in EVALUATION_ORDER if s in conditions), "eligible")
    assessment = assess(load_inputs(store, "g", "builder", T0))
    assert assessment.state == expected, assessment.reason
