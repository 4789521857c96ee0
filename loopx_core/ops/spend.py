"""Quota spends and voids: append-only ledger events bound to a settlement identity."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from loopx_core.errors import NotFoundError, RefusedError
from loopx_core.ids import check_id
from loopx_core.models.constants import SCHEMA_VERSION
from loopx_core.models.domain import check_optional
from loopx_core.models.records import LedgerEvent
from loopx_core.ops.require import require_agent, require_goal
from loopx_core.quota import charge_slots, compute_usage, lookback

if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any

    from loopx_core.store.base import Store


class SpendResult(NamedTuple):
    """The ledger event of a spend or void, and whether it was already there (a replay)."""

    event: LedgerEvent
    replayed: bool

    def to_json(self) -> dict[str, Any]:
        """The result as JSON data."""
        return {
            "replayed": self.replayed,
            "event": self.event.dump(exclude_none=True),
        }


class _AlreadyRecorded(Exception):
    def __init__(self, event: LedgerEvent) -> None:
        self.event = event


def spend(
    store: Store,
    goal_id: str,
    agent_id: str,
    now: datetime,
    *,
    todo_id: str | None = None,
    turn_instance_id: str | None = None,
    replan_obligation_id: str | None = None,
    effect_id: str | None = None,
    slots: int | None = None,
    minutes: float | None = None,
    started_at: datetime | None = None,
) -> SpendResult:
    """Charge slots for a turn: `slots` if given, else its measured duration (at least 1 slot).

    The duration is `minutes`, else now minus `started_at`, else now minus the todo's claim.
    A second spend for the same turn instance returns the first one unchanged.
    """
    registry = store.read_registry()
    goal = require_goal(registry, goal_id)
    require_agent(registry, agent_id)
    if todo_id is not None:
        check_id("todo", todo_id)
    slots = check_optional("--slots", "Slots", slots)
    minutes = check_optional("--minutes", "MinutesOrZero", minutes)
    duration = _duration(store, goal_id, agent_id, todo_id, now, minutes, started_at)
    charged = slots if slots is not None else charge_slots(goal.quota, duration or 0.0)

    def build(seq: int, last: LedgerEvent | None) -> LedgerEvent:
        if turn_instance_id is not None:
            earlier = store.spend_receipt(goal_id, turn_instance_id)
            if earlier is not None:
                raise _AlreadyRecorded(earlier)
        return LedgerEvent(
            schema_version=SCHEMA_VERSION,
            event_id=f"ev-{seq}",
            seq=seq,
            kind="spend",
            at=now,
            goal_id=goal_id,
            agent_id=agent_id,
            todo_id=todo_id,
            turn_instance_id=turn_instance_id,
            replan_obligation_id=replan_obligation_id,
            effect_id=effect_id,
            slots=charged,
            duration_seconds=duration,
        )

    try:
        return SpendResult(store.append_event(goal_id, build), replayed=False)
    except _AlreadyRecorded as found:
        return SpendResult(found.event, replayed=True)


def _duration(
    store: Store,
    goal_id: str,
    agent_id: str,
    todo_id: str | None,
    now: datetime,
    minutes: float | None,
    started_at: datetime | None,
) -> float | None:
    if minutes is not None:
        return minutes * 60
    if started_at is not None:
        return max(0.0, (now - started_at).total_seconds())
    if todo_id is not None:
        todo = store.read_goal(goal_id).todo(todo_id)
        if todo is None:
            raise NotFoundError(f"todo {todo_id!r} not found in goal {goal_id!r}")
        if todo.claimed_by == agent_id and todo.claimed_at is not None:
            return max(0.0, (now - todo.claimed_at).total_seconds())
    return None


def void(
    store: Store, goal_id: str, event_id: str, now: datetime, *, reason: str | None = None
) -> SpendResult:
    """Void an earlier spend (its slots no longer count); voiding twice returns the first void."""
    require_goal(store.read_registry(), goal_id)
    check_id("event", event_id)

    def build(seq: int, last: LedgerEvent | None) -> LedgerEvent:
        earlier = store.void_receipt(goal_id, event_id)
        if earlier is not None:
            raise _AlreadyRecorded(earlier)
        target = next((e for e in store.ledger_all(goal_id) if e.event_id == event_id), None)
        if target is None:
            raise NotFoundError(f"ledger event {event_id!r} not found in goal {goal_id!r}")
        if target.kind != "spend":
            raise RefusedError(
                f"event {event_id!r} is a {target.kind}, only spends can be voided",
                code="not_a_spend",
            )
        return LedgerEvent(
            schema_version=SCHEMA_VERSION,
            event_id=f"ev-{seq}",
            seq=seq,
            kind="void",
            at=now,
            goal_id=goal_id,
            agent_id=target.agent_id,
            todo_id=target.todo_id,
            turn_instance_id=target.turn_instance_id,
            replan_obligation_id=target.replan_obligation_id,
            effect_id=target.effect_id,
            slots=target.slots,
            voids_event_id=event_id,
            reason=(reason or "").strip() or None,
        )

    try:
        return SpendResult(store.append_event(goal_id, build), replayed=False)
    except _AlreadyRecorded as found:
        return SpendResult(found.event, replayed=True)


def quota_status(store: Store, goal_id: str, now: datetime) -> dict[str, Any]:
    """The goal's policy and usage now, as JSON data."""
    goal = require_goal(store.read_registry(), goal_id)
    usage = compute_usage(goal.quota, store.ledger_since(goal_id, now - lookback(goal.quota)), now)
    released = usage.released_at()
    return {
        "goal_id": goal_id,
        "policy": goal.quota.dump(),
        "allowed_slots": usage.allowed_slots,
        "spent_slots": usage.spent_slots,
        "remaining_slots": usage.remaining_slots,
        "throttled": usage.exhausted,
        "released_at": released.isoformat().replace("+00:00", "Z") if released else None,
        "spends_in_window": len(usage.spends),
    }
