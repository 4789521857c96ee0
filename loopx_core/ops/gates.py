"""Operator gates and focus waits."""

from __future__ import annotations

from datetime import datetime, timedelta

from loopx_core.errors import ConflictError, NotFoundError, RefusedError, UsageError
from loopx_core.ids import check_id
from loopx_core.models.constants import GateKind
from loopx_core.models.domain import check, check_optional
from loopx_core.models.records import Gate, GoalState, WaitingOn
from loopx_core.ops.require import require_goal
from loopx_core.store.base import Store


def open_gate(
    store: Store,
    goal_id: str,
    title: str,
    now: datetime,
    *,
    gate_id: str | None = None,
    blocks_agent: str | None = None,
    kind: GateKind = "owner",
) -> Gate:
    """Open an operator gate: it stops `blocks_agent` (or every agent) until resolved.

    The owner is notified (`gate_opened`, or `no_progress` for LoopX's escalation) through the
    notice outbox, out of the caller's way.
    """
    require_goal(store.read_registry(), goal_id)
    if not title.strip():
        raise UsageError("a gate needs a non-empty --title")
    if blocks_agent is not None:
        check_id("agent", blocks_agent)
    if gate_id is not None:
        check_id("gate", gate_id)

    def change(state: GoalState) -> Gate:
        prefix = "gate" if kind == "owner" else kind.replace("_", "-")
        chosen = gate_id or f"{prefix}-{len(state.gates) + 1}"
        if state.gate(chosen) is not None:
            raise ConflictError(f"gate {chosen!r} already exists in goal {goal_id!r}")
        gate = Gate(gate_id=chosen, title=title.strip(), kind=kind, blocks_agent=blocks_agent, opened_at=now)
        state.gates.append(gate)
        return gate

    gate = store.update_goal(goal_id, change)
    from loopx_core.notices.emit import queue_notice  # loaded only when a gate opens
    from loopx_core.notices.events import gate_opened

    queue_notice(store.root, gate_opened(goal_id, gate, now))  # never raises, never waits
    return gate


def resolve_gate(
    store: Store, goal_id: str, gate_id: str, now: datetime, *, resolution: str | None = None
) -> Gate:
    """Resolve an open gate (resolving a resolved gate changes nothing)."""
    check_id("goal", goal_id)
    check_id("gate", gate_id)

    def change(state: GoalState) -> Gate:
        gate = state.gate(gate_id)
        if gate is None:
            raise NotFoundError(f"gate {gate_id!r} not found in goal {goal_id!r}")
        if gate.status == "open":
            gate.status = "resolved"
            gate.resolution = (resolution or "").strip() or None
            gate.resolved_at = now
        return gate

    return store.update_goal(goal_id, change)


def focus_wait(
    store: Store,
    goal_id: str,
    reason: str,
    now: datetime,
    *,
    until: datetime | None = None,
    for_minutes: float | None = None,
    poll_every_minutes: float | None = None,
) -> WaitingOn:
    """Make the goal wait on external evidence until a time (polling on a cadence if given)."""
    check_id("goal", goal_id)
    if not reason.strip():
        raise UsageError("a focus wait needs a --reason")
    if (until is None) == (for_minutes is None):
        raise UsageError("give exactly one of --until or --for-minutes")
    poll_every_minutes = check_optional("--poll-every-minutes", "Minutes", poll_every_minutes)
    if until is None:
        resume = check(
            "end of --for-minutes",
            "Time",
            now + timedelta(minutes=check("--for-minutes", "Minutes", for_minutes)),
        )
    else:
        resume = check("--until", "InputTime", until)
    if resume <= now:
        raise UsageError("the focus wait must end in the future")

    def change(state: GoalState) -> WaitingOn:
        state.waiting_on = WaitingOn(
            reason=reason.strip(), until=resume, poll_every_minutes=poll_every_minutes, since=now
        )
        return state.waiting_on

    return store.update_goal(goal_id, change)


def focus_poll(store: Store, goal_id: str, now: datetime) -> WaitingOn:
    """Record a monitor poll that found nothing yet (the next poll is due one cadence later)."""
    check_id("goal", goal_id)

    def change(state: GoalState) -> WaitingOn:
        if state.waiting_on is None:
            raise RefusedError(f"goal {goal_id!r} is not waiting on anything", code="no_focus")
        state.waiting_on.last_polled_at = now
        return state.waiting_on

    return store.update_goal(goal_id, change)


def focus_clear(store: Store, goal_id: str, *, evidence: str | None = None) -> WaitingOn | None:
    """End the focus wait (keeping the evidence that ended it); clearing twice is harmless."""
    check_id("goal", goal_id)

    def change(state: GoalState) -> WaitingOn | None:
        cleared = state.waiting_on
        state.waiting_on = None
        if evidence and evidence.strip():
            state.evidence.append(evidence.strip())
        return cleared

    return store.update_goal(goal_id, change)
