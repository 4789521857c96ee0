"""The CLI adapter: `turn begin`, `writeback`, bound `quota spend`, terminal closeout, `turn cancel`.

Each command composes the shared settlement steps and prints a `loopx_turn_result_v0`
packet (settlement.results).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loopx_core import tracing
from loopx_core.decide.scope import lease_lost
from loopx_core.errors import ConflictError, NotFoundError, RefusedError, SettlementError
from loopx_core.ids import check_id
from loopx_core.kernel.algebra import SettlementResult, StepKind, compose
from loopx_core.kernel.results import BASE_PLAN, turn_result
from loopx_core.models.domain import check
from loopx_core.models.identity import SettlementIdentity, replan_obligation_id, turn_instance_id
from loopx_core.models.records import TurnJournal
from loopx_core.ops.lease import DEFAULT_LEASE_MINUTES, hold_lease, lease_todo
from loopx_core.ops.require import require_goal, require_worker
from loopx_core.quota import compute_usage, lookback
from loopx_core.settlement.runlog import run_id_for
from loopx_core.settlement.steps import (
    STEP_BUILDERS,
    TurnContext,
    guard,
    journal_host_phases,
    run_validation,
    subject_of,
)

if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any

    from loopx_core.store.base import Store


def begin_turn(
    store: Store,
    goal_id: str,
    agent_id: str,
    now: datetime,
    *,
    todo_id: str | None = None,
    replan: bool = False,
    instance: str | None = None,
    lease_minutes: float = DEFAULT_LEASE_MINUTES,
) -> tuple[TurnJournal, bool]:
    """Claim the todo (task lease) and open the turn's journal; returns (journal, replayed).

    A retried begin finds the agent's open turn for the same subject and changes nothing.
    """
    lease_minutes = check("--lease-minutes", "Minutes", lease_minutes)
    if todo_id is not None:
        check_id("todo", todo_id)
    registry = store.read_registry()
    goal = require_goal(registry, goal_id)
    require_worker(registry, agent_id)
    if (todo_id is None) == (not replan):
        raise SettlementError(
            "invalid_identity", "a turn advances exactly one of --todo-id or --replan", step="begin"
        )
    with store.goal_lock(goal_id):
        state = store.read_goal(goal_id)
        open_key = state.open_turns.get(agent_id)
        if open_key is not None:
            return _existing(store, goal_id, agent_id, open_key, todo_id), True
        usage = compute_usage(goal.quota, store.ledger_since(goal_id, now - lookback(goal.quota)), now)
        if usage.exhausted:
            raise SettlementError(
                "budget_rejected",
                f"quota exhausted: {usage.spent_slots}/{usage.allowed_slots} slots spent",
                step="begin",
            )
        subject = todo_id or replan_obligation_id(goal_id, state.version)
        identity = SettlementIdentity(
            goal_id=goal_id,
            agent_id=agent_id,
            todo_id=todo_id,
            turn_instance_id=instance or turn_instance_id(goal_id, agent_id, subject, state.version),
            replan_obligation_id=None if todo_id else subject,
        )
        if store.has_journal(goal_id, identity.turn_key):
            return store.read_journal(goal_id, identity.turn_key), True
        parent = tracing.new_parent() if tracing.enabled() else None
        with tracing.span("loopx.turn.begin", parent, **subject_of(identity)):
            if todo_id is not None:
                lease = lease_todo(store, identity, now, lease_minutes=lease_minutes)
                if lease.failure is not None:
                    lease.failure.raise_error()
            journal = TurnJournal(
                schema_version=1,
                turn_key=identity.turn_key,
                goal_id=goal_id,
                agent_id=agent_id,
                identity=identity.to_json(),
                plan=list(BASE_PLAN),
                started_at=now,
                updated_at=now,
                lease_minutes=lease_minutes if todo_id is not None else None,
                trace_parent=parent,
            )
            store.write_journal(journal)

            def register(s: Any) -> None:
                s.open_turns[agent_id] = identity.turn_key

            store.update_goal(goal_id, register)
        return journal, False


def traced_parent(journal: TurnJournal) -> str | None:
    """The turn's root span context (its journal's) when tracing is on and the turn is traced."""
    return journal.trace_parent if tracing.valid(journal.trace_parent) and tracing.enabled() else None


def _existing(store: Store, goal_id: str, agent_id: str, key: str, todo_id: str | None) -> TurnJournal:
    """The agent's open turn, if it is for the same subject (a retried begin); else a refusal."""
    try:
        journal = store.read_journal(goal_id, key)
    except NotFoundError:
        raise ConflictError(
            f"agent {agent_id!r} has an open turn whose journal is gone: clear it with "
            f"`loopx turn cancel --goal-id {goal_id} --agent-id {agent_id} --turn-key {key}`"
        ) from None
    if journal.identity.get("todo_id") != todo_id:  # another todo, or a todo turn vs a replan one
        raise SettlementError(
            "identity_mismatch",
            f"agent {agent_id!r} already has an open turn ({key}) for another subject: settle or cancel it first",
            step="begin",
        )
    return journal


SPAN_NAMES = {
    StepKind.VALIDATION: "loopx.validation",
    StepKind.DURABLE_WRITEBACK: "loopx.writeback",
    StepKind.QUOTA_SPEND: "loopx.spend",
    StepKind.TERMINAL_CLOSEOUT: "loopx.closeout",
}
"""Each settlement step's span (docs/observability.md)."""


def settle(ctx: TurnContext, kinds: list[StepKind]) -> tuple[SettlementResult, TurnJournal]:
    """Run the given steps of the turn in order (one composed Kleisli arrow)."""
    journal = ctx.store.read_journal(ctx.goal_id, ctx.turn_key)
    start = SettlementResult(journal.settlement_identity())
    parent = traced_parent(journal)
    arrows = [STEP_BUILDERS[k](ctx) for k in kinds]
    if parent is not None:
        subject = subject_of(journal.settlement_identity())
        arrows = [_traced(SPAN_NAMES[k], a, parent, subject) for k, a in zip(kinds, arrows, strict=True)]
    result = compose(*arrows)(start)
    after = ctx.store.read_journal(ctx.goal_id, ctx.turn_key)
    if parent is not None and result.receipts and not result.receipts[-1].replayed:
        ended(journal.status, after)  # this call's last step did the work: a replay ended nothing
    return result, after


def _traced(name: str, arrow: Any, parent: str, subject: dict[str, Any]) -> Any:
    """The step in a span of its own: its receipt's id, or its typed failure as the span's status."""

    def run(result: SettlementResult) -> SettlementResult:
        with tracing.span(name, parent, **subject) as span:
            before = len(result.receipts)
            out = arrow(result)
            for receipt in out.receipts[before:]:
                span.set_attribute("loopx.receipt_id", receipt.idempotency_key)
                span.set_attribute("loopx.replayed", receipt.replayed)
            if out.failure is not None and result.failure is None:
                tracing.failed(span, out.failure.kind)
            return out

    return run


def ended(was: str, after: TurnJournal) -> None:
    """Send the turn's root span when this change ended it (from `was` to committed, or stopped)."""
    if was in ("committed", "stopped") or after.status not in ("committed", "stopped"):
        return
    if after.trace_parent is None:
        return
    tracing.end_turn(
        after.trace_parent,
        after.started_at,
        after.updated_at,
        after.status,
        **subject_of(after.settlement_identity()),
    )


def record_host_phases(
    ctx: TurnContext, host_result: dict[str, Any], duration_seconds: float | None = None
) -> None:
    """Journal `host_execute` and `typed_result` (the host's own work and its typed result)."""
    with ctx.store.goal_lock(ctx.goal_id):
        journal = ctx.store.read_journal(ctx.goal_id, ctx.turn_key)
        if journal.status == "stopped":
            raise SettlementError("cancelled", "this turn was cancelled", step="host_execute")
        if journal_host_phases(journal, host_result, ctx.clock(), duration_seconds):
            ctx.store.write_journal(journal)


def cancel_turn(
    store: Store, goal_id: str, agent_id: str, turn_key: str, now: datetime, reason: str | None
) -> TurnJournal | None:
    """Stop an open turn: its journal stays as a tombstone; its todo lease is released.

    An open turn of this agent whose journal is gone (lost, or deleted by hand) is cleared
    from the goal so the agent can begin again: None says so.
    """
    check_id("goal", goal_id)
    check_id("agent", agent_id)
    with store.goal_lock(goal_id):
        state = store.read_goal(goal_id)  # a damaged state refuses before the journal changes
        try:
            journal = store.read_journal(goal_id, turn_key)
        except NotFoundError:
            if state.open_turns.get(agent_id) != turn_key:
                raise

            def forget(s: Any) -> None:
                del s.open_turns[agent_id]

            store.update_goal(goal_id, forget)
            return None
        if journal.agent_id != agent_id:
            raise SettlementError(
                "permission_denied",
                f"agent {agent_id!r} may not cancel a turn of {journal.agent_id!r}",
                step="cancel",
            )
        if journal.status == "stopped":
            return journal
        if journal.status == "committed":
            raise RefusedError(
                "this turn is already settled (committed): nothing to cancel", code="already_committed"
            )
        was = journal.status
        journal.status = "stopped"
        journal.cancel_reason = (reason or "").strip() or "cancelled"
        journal.updated_at = now
        store.write_journal(journal)
        if traced_parent(journal) is not None:
            ended(was, journal)
        todo_id = journal.identity.get("todo_id")

        def release(s: Any) -> None:
            if s.open_turns.get(agent_id) == turn_key:
                del s.open_turns[agent_id]
            todo = s.todo(todo_id) if todo_id else None
            if todo is not None and todo.claimed_by == agent_id and todo.status == "claimed":
                todo.end_claim("open", now)

        store.update_goal(goal_id, release)
        return journal


def renew_turn_lease(
    store: Store,
    goal_id: str,
    agent_id: str,
    turn_key: str,
    now: datetime,
    lease_minutes: float | None = None,
) -> dict[str, Any] | None:
    """Renew an open turn's todo lease (the turn's length unless given); the todo, or None for a replan.

    Refused as `lease_lost` when another agent took the todo over, and like every step when
    the turn is not this agent's or no longer open.
    """

    with store.goal_lock(goal_id):
        journal = store.read_journal(goal_id, turn_key)
        refusal = guard(TurnContext(store, goal_id, agent_id, turn_key, lambda: now), journal)
        if refusal:
            raise SettlementError(str(refusal[0]), refusal[1], step="renew")
        if journal.status == "committed":
            raise RefusedError(
                "this turn is already settled: its lease is no longer renewed", code="already_committed"
            )
        identity = journal.settlement_identity()
        if identity.todo_id is None:
            return None
        minutes = check(
            "--lease-minutes", "Minutes", lease_minutes or journal.lease_minutes or DEFAULT_LEASE_MINUTES
        )
        lost = hold_lease(store, identity, now, lease_minutes=minutes)
        if lost:
            raise SettlementError(str(lost[0]), lost[1], step="renew")
        todo = store.read_goal(goal_id).todo(identity.todo_id)
        return todo.dump(exclude_none=True) if todo else None


def mark_failed(store: Store, journal: TurnJournal, failure: dict[str, str], now: datetime) -> None:
    """The driver's record of a failed phase: the journal becomes a `failed` tombstone until retried."""
    with store.goal_lock(journal.goal_id):
        current = store.read_journal(journal.goal_id, journal.turn_key)
        current.status = "failed"
        current.failure = failure
        current.updated_at = now
        store.write_journal(current)


def reopen(store: Store, journal: TurnJournal, now: datetime) -> TurnJournal:
    """Retry a failed journal: back to `open`, committed phases kept (they replay)."""
    with store.goal_lock(journal.goal_id):
        current = store.read_journal(journal.goal_id, journal.turn_key)
        if current.status == "failed":
            current.status, current.failure, current.updated_at = "open", None, now
            store.write_journal(current)
        return current


def writeback_turn(ctx: TurnContext, *, adapter: str) -> dict[str, Any]:
    """The host-driven writeback: journal the host's work, then validation and the durable writeback.

    Refused (typed, like every step) before anything is journaled when the turn is not this
    agent's, was cancelled, or names another todo. Returns the turn result; raises the failure.
    """

    journal = ctx.store.read_journal(ctx.goal_id, ctx.turn_key)
    refusal = guard(ctx, journal)
    if refusal:
        raise SettlementError(str(refusal[0]), refusal[1], step="host_execute")
    identity = journal.settlement_identity()
    lost = lease_lost(ctx.store.read_goal(ctx.goal_id), identity)
    if lost and journal.phase("durable_writeback") is None:
        raise SettlementError("lease_lost", lost, step="host_execute")
    # every file the writeback reads is read before anything is written: a damaged one refuses first
    ctx.store.read_registry()
    ctx.store.run_indexed(ctx.goal_id, run_id_for(identity.effect_id))
    if journal.phase("validation") is None:  # a verdict is needed, and refused before anything is journaled
        passed = run_validation(ctx)[0] if ctx.validation_command else ctx.validation_passed
        if not passed:
            why = "no validation given" if passed is None else "validation failed"
            raise SettlementError(
                "writeback_rejected",
                f"{why}: pass --validation-status passed or a --validation-command; nothing was written back",
                step="validation",
            )
    ctx.host_result = {"adapter": adapter, "status": "succeeded"}  # journaled with validation's receipt
    return settle_steps(ctx, [StepKind.VALIDATION, StepKind.DURABLE_WRITEBACK], adapter=adapter)


def settle_steps(ctx: TurnContext, kinds: list[StepKind], *, adapter: str) -> dict[str, Any]:
    """Run settlement steps for an adapter: the turn result, or the typed failure raised."""
    result, journal = settle(ctx, kinds)
    if result.failure is not None:
        result.failure.raise_error()
    return turn_result(journal, result, adapter=adapter)
