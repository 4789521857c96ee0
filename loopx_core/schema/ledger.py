"""Ledger events (`.loopx/goals/<goal>/events.jsonl`): the truth of spend.

Every event carries the settlement identity (goal, agent, todo, turn instance, replan
obligation) and the effect id it settles, so spends bind to a turn without a migration.
"""

from __future__ import annotations

from typing import Literal

from loopx_core.schema.common import Id, StrictModel, Time
from loopx_core.schema.domain import Ordinal, Seconds, SlotCount


class LedgerEvent(StrictModel):
    """One append-only ledger line: a spend of slots, or the void of an earlier spend."""

    schema_version: Literal[1]
    event_id: Id
    seq: Ordinal
    kind: Literal["spend", "void"]
    at: Time
    goal_id: Id
    agent_id: Id
    todo_id: Id | None = None
    turn_instance_id: str | None = None
    replan_obligation_id: str | None = None
    effect_id: str | None = None
    slots: SlotCount = 0
    duration_seconds: Seconds | None = None
    voids_event_id: Id | None = None
    reason: str | None = None
