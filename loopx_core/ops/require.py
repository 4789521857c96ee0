"""The registry lookups every command starts with: the goal, the agent, an agent that takes work."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loopx_core.errors import NotFoundError, SettlementError
from loopx_core.ids import check_id

if TYPE_CHECKING:
    from loopx_core.models.records import AgentEntry, GoalEntry, Registry


def require_goal(registry: Registry, goal_id: str) -> GoalEntry:
    """The goal's registry entry, or a `NotFoundError` that says how to create it."""
    check_id("goal", goal_id)
    goal = registry.goals.get(goal_id)
    if goal is None:
        raise NotFoundError(f"goal {goal_id!r} not found (see `loopx goal list`)")
    return goal


def require_agent(registry: Registry, agent_id: str) -> AgentEntry:
    """The agent's registry entry, or a `NotFoundError` that says how to register it."""
    check_id("agent", agent_id)
    agent = registry.agents.get(agent_id)
    if agent is None:
        raise NotFoundError(
            f"agent {agent_id!r} is not registered: run `loopx agent register --agent-id {agent_id}`"
        )
    return agent


def require_worker(registry: Registry, agent_id: str) -> AgentEntry:
    """The agent's entry if it may take work: a monitor-only agent is refused (permission_denied)."""
    agent = require_agent(registry, agent_id)
    if agent.monitor_only:
        raise SettlementError(
            "permission_denied",
            f"agent {agent_id!r} is monitor-only: it observes and polls, never takes work "
            f"(`loopx agent register --agent-id {agent_id} --takes-work` changes that)",
            step="validation",
        )
    return agent
