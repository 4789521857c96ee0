"""The registry (`.loopx/registry.json`): goal index, quota policy, agents."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from loopx_core.schema.common import Id, StrictModel, Time
from loopx_core.schema.domain import (
    Compute,
    Minutes,
    MinutesOrZero,
    NoProgressLimit,
    SlotMinutes,
    WindowHours,
)


class QuotaPolicy(StrictModel):
    """A goal's compute budget: `compute` of every slot in a rolling window."""

    compute: Compute = 1.0
    window_hours: WindowHours = 24.0
    slot_minutes: SlotMinutes = 1.0
    min_interval_minutes: MinutesOrZero = 0.0


class GoalEntry(StrictModel):
    """One goal in the index: its objective, activation status and quota policy."""

    goal_id: Id
    objective: str
    status: Literal["active", "stopped", "done"] = "active"
    quota: QuotaPolicy = Field(default_factory=QuotaPolicy)
    no_progress_limit: NoProgressLimit = 3
    """Settled turns in a row that advance nothing before the goal waits for its owner."""
    created_at: Time
    updated_at: Time


class AgentEntry(StrictModel):
    """A registered agent and the capabilities it is registered to have."""

    agent_id: Id
    capabilities: list[str] = Field(default_factory=list)
    host: str | None = None
    monitor_only: bool = False
    """Observes and polls only: never takes a todo or a replan turn (seed 002)."""
    cadence_minutes: Minutes | None = None
    """How often its host's heartbeat runs; an agent silent for two cadences is stalled."""
    registered_at: Time
    updated_at: Time


class Registry(StrictModel):
    """The whole registry file."""

    schema_version: Literal[1]
    goals: dict[Id, GoalEntry] = Field(default_factory=dict)
    agents: dict[Id, AgentEntry] = Field(default_factory=dict)
