"""Mutants of loopx_core/decide/assess.py that the rest of the suite let live (docs/testing.md).

The goal-level view (`loopx status` asks without an agent) and each reason a goal is paused
are part of the packet: state, reason code, lane and the reason a person reads.
"""

from __future__ import annotations

import pytest

from loopx_core.decide.assess import Assessment, assess
from loopx_core.decide.packet import load_inputs
from loopx_core.ops import goals, todos
from tests.conftest import T0, Project


@pytest.fixture
def goal(project: Project) -> Project:
    """Goal `g` with agent `builder` registered and no todos."""
    goals.add_goal(project.store, "g", "Objective", T0)
    goals.register_agent(project.store, "builder", [], T0)
    return project


def test_the_goal_level_view_replans_an_empty_frontier(goal: Project) -> None:
    todos.add_todo(goal.store, "g", "For the owner", T0, kind="user")  # a user todo is no agent work
    assert assess(load_inputs(goal.store, "g", None, T0)) == Assessment(
        "eligible", "no open agent todos: replan the frontier", ("frontier_empty",), "replan"
    )


def test_the_goal_level_view_sees_open_agent_work(goal: Project) -> None:
    todos.add_todo(goal.store, "g", "Write parser", T0)
    assert assess(load_inputs(goal.store, "g", None, T0)) == Assessment(
        "eligible", "open agent todos", ("todos_open",), "workspace"
    )


@pytest.mark.parametrize(
    ("status", "code", "reason"),
    [
        ("stopped", "goal_stopped", "goal is stopped"),
        ("done", "goal_done", "goal is done (terminal closeout)"),
    ],
)
def test_a_goal_that_is_not_active_is_paused_with_its_own_reason(
    goal: Project, status: str, code: str, reason: str
) -> None:
    todos.add_todo(goal.store, "g", "Write parser", T0)
    goals.set_goal_status(goal.store, "g", status, T0)
    for agent in ("builder", None):
        assert assess(load_inputs(goal.store, "g", agent, T0)) == Assessment(
            "paused", reason, (code,), "workspace"
        )


def test_compute_zero_is_a_hard_pause(project: Project) -> None:
    goals.add_goal(project.store, "g", "Objective", T0, compute=0)
    goals.register_agent(project.store, "builder", [], T0)
    assert assess(load_inputs(project.store, "g", "builder", T0)) == Assessment(
        "paused", "compute quota is 0 (hard pause)", ("compute_zero",), "workspace"
    )
