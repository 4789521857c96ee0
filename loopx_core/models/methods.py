"""What a record does besides holding its fields: the bases the generated records extend.

scripts/gen_records.py makes each record of the same name a subclass of the class here, so
`state.todo("t1")` or `policy.allowed_slots` work on what the store reads.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from loopx_core.models.identity import SettlementIdentity

if TYPE_CHECKING:
    from datetime import datetime

    from loopx_core.models import records


class Todo:
    """One unit of work, for an agent or for the user (operator)."""

    __slots__ = ()
    status: str

    @property
    def is_open_work(self) -> bool:
        """Open or claimed: not yet done, blocked or deferred."""
        return self.status in ("open", "claimed")

    def end_claim(self: Any, status: str, now: datetime) -> None:
        """Drop the lease (holder, claim time, expiry) and move to `status`."""
        self.status = status
        self.claimed_by = None
        self.claimed_at = None
        self.lease_expires_at = None
        self.updated_at = now


class GoalState:
    """The whole per-goal state file."""

    __slots__ = ()
    todos: list[records.Todo]
    gates: list[records.Gate]

    def todo(self, todo_id: str) -> records.Todo | None:
        """The todo with this id, or None."""
        return next((t for t in self.todos if t.todo_id == todo_id), None)

    def gate(self, gate_id: str) -> records.Gate | None:
        """The gate with this id, or None."""
        return next((g for g in self.gates if g.gate_id == gate_id), None)


class QuotaPolicy:
    """A goal's compute budget."""

    __slots__ = ()
    compute: float
    window_hours: float
    slot_minutes: float

    @property
    def allowed_slots(self) -> int:
        """`floor(window_hours * 60 / slot_minutes * compute)`."""
        return math.floor(self.window_hours * 60 / self.slot_minutes * self.compute + 1e-9)


class TurnJournal:
    """A turn's journal."""

    __slots__ = ()
    identity: dict[str, str | None]
    phases: list[records.PhaseRecord]

    def settlement_identity(self) -> SettlementIdentity:
        """The identity this journal settles."""
        return SettlementIdentity(**self.identity)  # type: ignore[arg-type]

    def phase(self, name: str) -> records.PhaseRecord | None:
        """The record of a completed phase, or None."""
        return next((p for p in self.phases if p.phase == name), None)

    def completed(self) -> list[str]:
        """Completed phase names, in journal order."""
        return [p.phase for p in self.phases]

    def record(self: Any, name: str, at: datetime, receipt: dict[str, Any]) -> None:
        """Append a completed phase (callers keep the order; inspection verifies it), checked as the
        journal's `phases` field reads one."""
        self.phases += self.FIELDS["phases"].kind.load([{"phase": name, "at": at, "receipt": receipt}])
        self.updated_at = at


class OutboxRecord:
    """A notice and its delivery to each sink."""

    __slots__ = ()
    deliveries: dict[str, Any]

    @property
    def pending(self) -> bool:
        """True while some sink still waits for it."""
        return any(d.status == "pending" for d in self.deliveries.values())


class SinkConfig:
    """A configured sink."""

    __slots__ = ()
    goal_id: str | None
    events: list[str]

    def wants(self, notice: Any) -> bool:
        """True when this sink takes `notice`."""
        if notice.kind == "test":
            return True
        if self.goal_id is not None and notice.goal_id != self.goal_id:
            return False
        return not self.events or notice.kind in self.events
