"""The turn journal (`.loopx/goals/<goal>/turns/<64 hex>.json`): one turn's phases and receipts.

A journal records one turn's completed phases, in order, with their receipts. Committed,
stopped and failed journals stay as tombstones (read-only inspection: settlement.inspection).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, StringConstraints

from loopx_core.models import rules
from loopx_core.schema.common import StrictModel, Time
from loopx_core.schema.domain import JsonObject, Minutes


class PhaseRecord(StrictModel):
    """One completed phase and its receipt."""

    phase: str
    at: Time
    receipt: JsonObject = Field(default_factory=dict)


class TurnJournal(StrictModel):
    """A turn's journal. Phase and status are plain strings so inspection can flag unknown ones."""

    schema_version: Literal[1]
    turn_key: str
    goal_id: str
    agent_id: str
    identity: Annotated[dict[str, str | None], AfterValidator(rules.whole_identity)]
    """Exactly the settlement identity's keys, binding one todo or one replan obligation."""
    status: str = "open"
    plan: list[str] = Field(default_factory=list)
    phases: list[PhaseRecord] = Field(default_factory=list)
    started_at: Time
    updated_at: Time
    host_result: JsonObject | None = None
    failure: dict[str, str] | None = None
    cancel_reason: str | None = None
    lease_minutes: Minutes | None = None
    """The todo lease length each settlement phase renews (None: the default)."""
    trace_parent: Annotated[str, StringConstraints(pattern=r"^00-[0-9a-f]{32}-[0-9a-f]{16}-01$")] | None = (
        None
    )
    """The W3C `traceparent` of the turn's root span, when the turn was traced (docs/observability.md)."""
