"""The task-lease adapter: claiming a todo composes validation and the CAS lease write.

The lease keeps its own eligibility and conflict rules (agent scope, operator gates,
blocking todos; a live lease of another agent is a conflict, exit 5), but runs as two
settlement steps bound to one identity under one goal lock, so validation always sees the
state the write changes.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from loopx_core.decide import scope
from loopx_core.decide.scope import lease_lost
from loopx_core.errors import ConflictError, NotFoundError
from loopx_core.kernel.algebra import FailureKind, SettlementReceipt, SettlementResult, compose

if TYPE_CHECKING:
    from datetime import datetime

    from loopx_core.kernel.algebra import Step
    from loopx_core.models.identity import SettlementIdentity
    from loopx_core.models.records import GoalState, Todo
    from loopx_core.store.base import Store

DEFAULT_LEASE_MINUTES = 30.0
"""A todo lease's length unless the claim or turn says otherwise."""
SETTLED_HOLD_MINUTES = 7 * 24 * 60.0
"""How long a todo stays held by its agent once its turn has spent (committed) and only its
`todo complete` is left: the work is paid for, so no other agent may redo it when a host dies
between the spend and the closeout (`loopx todo release` frees it sooner)."""


def _validate(state: GoalState, identity: SettlementIdentity, now: datetime) -> Step:
    def step(result: SettlementResult) -> SettlementResult:
        todo = state.todo(identity.todo_id or "")
        if todo is None:
            raise NotFoundError(f"todo {identity.todo_id!r} not found in goal {identity.goal_id!r}")
        agent = identity.agent_id
        refusal = scope.scope_refusal(todo, agent, now)
        if refusal == "claimed_by_other":
            until = f"{todo.lease_expires_at:%Y-%m-%dT%H:%M:%SZ}" if todo.lease_expires_at else "?"
            raise ConflictError(f"todo {todo.todo_id!r} is claimed by {todo.claimed_by!r} until {until}")
        if refusal is not None:
            return result.fail(
                FailureKind.PERMISSION_DENIED,
                "validation",
                f"agent {agent!r} may not take todo {todo.todo_id!r}: {refusal}",
            )
        gate = scope.operator_blockers(state, agent)
        if gate:
            return result.fail(
                FailureKind.PERMISSION_DENIED,
                "validation",
                f"agent {agent!r} is behind an operator gate: {', '.join(gate)}",
            )
        if todo not in scope.in_scope(state, agent, now):
            return result.fail(
                FailureKind.PERMISSION_DENIED,
                "validation",
                f"agent {agent!r} must finish its blocking todo first",
            )
        key = f"{identity.effect_id[:16]}:lease_validation"
        return result.add(SettlementReceipt("validation", key, identity.effect_id, {"todo_id": todo.todo_id}))

    return step


def _write(state: GoalState, identity: SettlementIdentity, now: datetime, lease_minutes: float) -> Step:
    def step(result: SettlementResult) -> SettlementResult:
        todo: Todo = state.todo(identity.todo_id or "")  # type: ignore[assignment]
        renewing = todo.claimed_by == identity.agent_id and scope.lease_live(todo, now)
        todo.claimed_by = identity.agent_id
        todo.claimed_at = todo.claimed_at if renewing else now
        todo.lease_expires_at = now + timedelta(minutes=lease_minutes)
        todo.status = "claimed"
        todo.updated_at = now
        key = f"{identity.effect_id[:16]}:lease_write"
        detail = {"todo_id": todo.todo_id, "lease_expires_at": todo.lease_expires_at.isoformat()}
        return result.add(
            SettlementReceipt("durable_writeback", key, identity.effect_id, detail), f"lease:{todo.todo_id}"
        )

    return step


def hold_lease(
    store: Store, identity: SettlementIdentity, now: datetime, *, lease_minutes: float
) -> tuple[FailureKind, str] | None:
    """Renew the turn's todo lease to `now + lease_minutes`, or say why it is lost."""
    if identity.todo_id is None:
        return None

    class _Lost(Exception):
        pass

    def renew(state: GoalState) -> None:
        why = lease_lost(state, identity)
        if why is not None:
            raise _Lost(why)
        todo: Todo = state.todo(identity.todo_id)  # type: ignore[arg-type,assignment]
        todo.lease_expires_at = now + timedelta(minutes=lease_minutes)
        todo.updated_at = now

    try:
        store.update_goal(identity.goal_id, renew)
    except _Lost as lost:
        return FailureKind.LEASE_LOST, str(lost)
    return None


def lease_todo(
    store: Store, identity: SettlementIdentity, now: datetime, *, lease_minutes: float
) -> SettlementResult:
    """Validate and write the lease by compare-and-swap; a failed validation writes nothing."""

    class _Refused(Exception):
        def __init__(self, result: SettlementResult) -> None:
            self.result = result

    def change(state: GoalState) -> SettlementResult:
        result = compose(_validate(state, identity, now), _write(state, identity, now, lease_minutes))(
            SettlementResult(identity)
        )
        if result.failure is not None:
            raise _Refused(result)  # abort the update: nothing is written
        return result

    try:
        return store.update_goal(identity.goal_id, change)
    except _Refused as refused:
        return refused.result
