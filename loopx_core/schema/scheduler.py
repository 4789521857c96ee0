"""The scheduler file (`.loopx/goals/<goal>/scheduler.json`): what each agent's host last applied."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from loopx_core.schema.common import Id, StrictModel, Time
from loopx_core.schema.domain import Count


class SchedulerEntry(StrictModel):
    """One agent's heartbeat as the host last reported it."""

    applied_rrule: str | None = None
    paused: bool = False
    fingerprint: str | None = None
    unchanged_polls: Count = 0
    acked_at: Time | None = None
    failures: Count = 0
    last_error: str | None = None
    failed_at: Time | None = None


class SchedulerState(StrictModel):
    """The goal's scheduler file."""

    schema_version: Literal[1]
    goal_id: Id
    agents: dict[Id, SchedulerEntry] = Field(default_factory=dict)
