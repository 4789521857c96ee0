"""The turn journal (`.loopx/goals/<goal>/turns/<64 hex>.json`): one turn's phases and receipts.

A journal records one turn's completed phases, in order, with their receipts. Committed,
stopped and failed journals stay as tombstones (read-only inspection: settlement.inspection).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AwareDatetime, Field, field_validator

from loopx_core.datetimes import datetime
from loopx_core.models.common import StrictModel
from loopx_core.models.constants import PHASES, STATUSES, TOMBSTONES  # noqa: F401 (their importers read them here)
from loopx_core.models.domain import JsonObject, Minutes
from loopx_core.models.identity import SettlementIdentity, check_turn_key  # noqa: F401 (importers read it here)

IDENTITY_KEYS = frozenset({"goal_id", "agent_id", "todo_id", "turn_instance_id", "replan_obligation_id"})


class PhaseRecord(StrictModel):
    """One completed phase and its receipt."""

    phase: str
    at: AwareDatetime
    receipt: JsonObject = Field(default_factory=dict)


class TurnJournal(StrictModel):
    """A turn's journal. Phase and status are plain strings so inspection can flag unknown ones."""

    schema_version: Literal[1]
    turn_key: str
    goal_id: str
    agent_id: str
    identity: dict[str, str | None]
    status: str = "open"
    plan: list[str] = Field(default_factory=list)
    phases: list[PhaseRecord] = Field(default_factory=list)
    started_at: AwareDatetime
    updated_at: AwareDatetime
    host_result: JsonObject | None = None
    failure: dict[str, str] | None = None
    cancel_reason: str | None = None
    lease_minutes: Minutes | None = None
    """The todo lease length each settlement phase renews (None: the default)."""

    @field_validator("identity")
    @classmethod
    def _whole_identity(cls, identity: dict[str, str | None]) -> dict[str, str | None]:
        """Exactly the settlement identity's keys, binding one todo or one replan obligation."""
        if set(identity) != IDENTITY_KEYS:
            raise ValueError(f"identity must have exactly the keys {', '.join(sorted(IDENTITY_KEYS))}")
        if not identity["goal_id"] or not identity["agent_id"] or not identity["turn_instance_id"]:
            raise ValueError("identity needs goal_id, agent_id and turn_instance_id")
        if (identity["todo_id"] is None) == (identity["replan_obligation_id"] is None):
            raise ValueError("identity binds exactly one of todo_id or replan_obligation_id")
        return identity

    def settlement_identity(self) -> SettlementIdentity:
        """The identity this journal settles."""
        return SettlementIdentity(**self.identity)  # type: ignore[arg-type]

    def phase(self, name: str) -> PhaseRecord | None:
        """The record of a completed phase, or None."""
        return next((p for p in self.phases if p.phase == name), None)

    def completed(self) -> list[str]:
        """Completed phase names, in journal order."""
        return [p.phase for p in self.phases]

    def record(self, name: str, at: datetime, receipt: dict[str, Any]) -> None:
        """Append a completed phase (callers keep the order; inspection verifies it)."""
        self.phases.append(PhaseRecord(phase=name, at=at, receipt=receipt))
        self.updated_at = at
