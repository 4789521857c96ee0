"""The quota engine: slots allowed and spent over a rolling window, from the ledger."""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Literal, NamedTuple

from loopx_core.models.constants import MAX_SLOTS

if TYPE_CHECKING:
    from loopx_core.models.records import LedgerEvent, QuotaPolicy

QuotaState = Literal[
    "paused", "blocked_health", "operator_gate", "focus_wait", "throttled", "waiting", "eligible"
]

EVALUATION_ORDER: tuple[QuotaState, ...] = (
    "paused",
    "blocked_health",
    "operator_gate",
    "focus_wait",
    "throttled",
    "waiting",
    "eligible",
)
"""Precedence of the seven states: the first that applies wins."""

ATTENTION_ORDER: tuple[QuotaState, ...] = (
    "blocked_health",
    "operator_gate",
    "focus_wait",
    "eligible",
    "waiting",
    "throttled",
    "paused",
)
"""How `loopx status` sorts goals: who must act first."""


def window(policy: QuotaPolicy) -> timedelta:
    """The rolling window length."""
    return timedelta(hours=policy.window_hours)


def lookback(policy: QuotaPolicy) -> timedelta:
    """How far back the ledger must be read: the window, or the cadence if longer."""
    return max(window(policy), timedelta(minutes=policy.min_interval_minutes))


def charge_slots(policy: QuotaPolicy, duration_seconds: float) -> int:
    """Slots for a turn of this measured duration: `ceil(minutes / slot_minutes)`, 1 to `MAX_SLOTS`."""
    return min(MAX_SLOTS, max(1, math.ceil(duration_seconds / 60 / policy.slot_minutes - 1e-9)))


class QuotaUsage(NamedTuple):
    """Allowed and spent slots at one moment, and when enough slots free up."""

    policy: QuotaPolicy
    now: datetime
    allowed_slots: int
    spent_slots: int
    spends: tuple[LedgerEvent, ...]
    """Unvoided spends inside the window, oldest first."""
    last_spend_at: dict[str, datetime]
    """Each agent's latest unvoided spend within the lookback."""

    @property
    def remaining_slots(self) -> int:
        """Slots left in the window (never negative)."""
        return max(0, self.allowed_slots - self.spent_slots)

    @property
    def exhausted(self) -> bool:
        """True when spent >= allowed."""
        return self.spent_slots >= self.allowed_slots

    def released_at(self) -> datetime | None:
        """When enough old slots leave the window for spent < allowed (None if not throttled)."""
        if not self.exhausted or self.allowed_slots <= 0:
            return None
        excess = self.spent_slots - self.allowed_slots + 1
        freed = 0
        for spend in self.spends:
            freed += spend.slots
            if freed >= excess:
                return spend.at + window(self.policy)
        return None  # pragma: no cover - spends always cover spent_slots

    def due_at(self, agent_id: str | None) -> datetime | None:
        """When the agent's cadence (`min_interval_minutes`) next allows a turn, if later than now."""
        if agent_id is None or not self.policy.min_interval_minutes:
            return None
        last = self.last_spend_at.get(agent_id)
        if last is None:
            return None
        due = last + timedelta(minutes=self.policy.min_interval_minutes)
        return due if due > self.now else None


def compute_usage(policy: QuotaPolicy, events: list[LedgerEvent], now: datetime) -> QuotaUsage:
    """Fold ledger events (at least the lookback, oldest first) into a `QuotaUsage`."""
    start = now - window(policy)
    voided = {e.voids_event_id for e in events if e.kind == "void"}
    spends = [e for e in events if e.kind == "spend" and e.event_id not in voided and e.at <= now]
    in_window = tuple(e for e in spends if e.at > start)  # the window is (now - length, now]
    last: dict[str, datetime] = {}
    for spend in spends:
        last[spend.agent_id] = spend.at
    return QuotaUsage(
        policy=policy,
        now=now,
        allowed_slots=policy.allowed_slots,
        spent_slots=sum(e.slots for e in in_window),
        spends=in_window,
        last_spend_at=last,
    )
