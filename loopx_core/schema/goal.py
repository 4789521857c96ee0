"""Goal state (`.loopx/goals/<goal>/state.json`): todos, gates, focus, health, version."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from loopx_core.models.constants import GateKind, TodoStatus
from loopx_core.schema.common import Id, StrictModel, Time
from loopx_core.schema.domain import Count, Minutes, Ordinal, Priority


class Todo(StrictModel):
    """One unit of work, for an agent or for the user (operator)."""

    todo_id: Id
    title: str
    kind: Literal["agent", "user"] = "agent"
    status: TodoStatus = "open"
    priority: Priority = 2
    required_capabilities: list[str] = Field(default_factory=list)
    claimed_by: Id | None = None
    claimed_at: Time | None = None
    lease_expires_at: Time | None = None
    bound_agent: Id | None = None
    excluded_agents: list[Id] = Field(default_factory=list)
    blocks_agent: Id | None = None
    evidence: list[str] = Field(default_factory=list)
    blocked_reason: str | None = None
    rescoped_at: Time | None = None
    """When its title, priority, capabilities or agents last changed (a replan re-scopes work)."""
    created_at: Time
    updated_at: Time


class Gate(StrictModel):
    """An operator gate: while open it stops the agent it blocks (or every agent)."""

    gate_id: Id
    title: str
    status: Literal["open", "resolved"] = "open"
    kind: GateKind = "owner"
    """Why it is open: the owner's own gate, or LoopX's escalation of a loop that advanced nothing."""
    blocks_agent: Id | None = None
    resolution: str | None = None
    opened_at: Time
    resolved_at: Time | None = None


class WaitingOn(StrictModel):
    """A focus wait: the goal waits on external evidence until `until`."""

    reason: str
    until: Time
    poll_every_minutes: Minutes | None = None
    last_polled_at: Time | None = None
    since: Time


class HealthFinding(StrictModel):
    """A recorded health problem; `high` severity blocks the goal."""

    code: str
    severity: Literal["low", "medium", "high"]
    message: str


class GoalState(StrictModel):
    """The whole per-goal state file; `version` increments on every write (compare-and-swap)."""

    schema_version: Literal[1]
    goal_id: Id
    version: Count = 0
    next_todo_number: Ordinal = 1
    todos: list[Todo] = Field(default_factory=list)
    gates: list[Gate] = Field(default_factory=list)
    waiting_on: WaitingOn | None = None
    health: list[HealthFinding] = Field(default_factory=list)
    evidence: list[str] = Field(default_factory=list)
    """Goal-level evidence, e.g. what ended a focus wait."""
    no_progress_turns: Count = 0
    """Settled turns in a row that advanced nothing (reset by any progress)."""
    open_turns: dict[Id, str] = Field(default_factory=dict)
    """Each agent's open (or failed, awaiting retry) turn: agent id -> turn key."""
