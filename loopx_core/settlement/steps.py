"""The settlement steps over the real store: each a Kleisli arrow on `SettlementResult`.

Every step takes the goal lock, reads the turn journal, checks the journal's guard and its
own precondition, then either replays its journaled receipt (no effect) or performs its
effect and journals its receipt. The CLI commands and the turn driver compose the same
steps; they differ only in who calls them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loopx_core import faults as fault
from loopx_core import tracing
from loopx_core.clock import iso
from loopx_core.decide.scope import lease_lost
from loopx_core.ids import check_id
from loopx_core.kernel.algebra import FailureKind, SettlementReceipt, SettlementResult, StepKind
from loopx_core.ops.lease import DEFAULT_LEASE_MINUTES, SETTLED_HOLD_MINUTES, hold_lease
from loopx_core.quota import charge_slots, compute_usage, lookback
from loopx_core.settlement import runlog

if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime
    from typing import Any

    from loopx_core.kernel.algebra import Step
    from loopx_core.models.constants import Progress
    from loopx_core.models.records import GoalState, TurnJournal
    from loopx_core.store.base import Store

    Outcome = tuple[dict[str, Any], str | None] | tuple[FailureKind, str]
    """A performed step's (receipt detail, visible effect), or a (failure kind, message)."""


class TurnContext:
    """Who settles which turn, when, and with what (the arguments of the CLI commands)."""

    def __init__(
        self,
        store: Store,
        goal_id: str,
        agent_id: str,
        turn_key: str,
        clock: Callable[[], datetime],
        todo_id: str | None = None,
        summary: str = "",
        evidence: list[str] | None = None,
        validation_passed: bool | None = None,
        validation_command: str | None = None,
        changed_files: list[str] | None = None,
        slots: int | None = None,
        no_followup: bool = False,
        validation_ran: tuple[bool, dict[str, Any]] | None = None,
        no_progress: str | None = None,
        release_on_commit: bool = True,
        host_result: dict[str, Any] | None = None,
    ) -> None:
        check_id("goal", goal_id)
        check_id("agent", agent_id)
        if todo_id is not None:
            check_id("todo", todo_id)
        self.store = store
        self.goal_id = goal_id
        self.agent_id = agent_id
        self.turn_key = turn_key
        self.clock = clock
        self.todo_id = todo_id
        self.summary = summary
        self.evidence: list[str] = [] if evidence is None else evidence
        self.validation_passed = validation_passed
        self.validation_command = validation_command
        self.changed_files: list[str] = [] if changed_files is None else changed_files
        self.slots = slots
        self.no_followup = no_followup
        self.validation_ran = validation_ran
        """The validation command's verdict once it ran (a writeback runs it before journaling anything)."""
        self.no_progress = no_progress
        """The agent's own word that the turn advanced nothing, and why (`--no-progress REASON`)."""
        self.release_on_commit = release_on_commit
        """Free the agent's open-turn slot at commit (the driver frees it after finishing the todo)."""
        self.host_result = host_result
        """The host's typed result, journaled (`host_execute`, `typed_result`) with the first
        step's receipt in one write, unless the journal has them already."""


def guard(ctx: TurnContext, journal: TurnJournal) -> tuple[FailureKind, str] | None:
    """Refusals that apply to every step of this turn."""
    if journal.status == "stopped":
        return FailureKind.CANCELLED, f"turn {ctx.turn_key[:19]}... was cancelled"
    if journal.agent_id != ctx.agent_id:
        return (
            FailureKind.PERMISSION_DENIED,
            f"agent {ctx.agent_id!r} may not settle a turn of {journal.agent_id!r}",
        )
    identity = journal.identity
    if journal.goal_id != ctx.goal_id or identity.get("goal_id") != ctx.goal_id:
        return FailureKind.IDENTITY_MISMATCH, f"turn belongs to goal {journal.goal_id!r}, not {ctx.goal_id!r}"
    if ctx.todo_id is not None and identity.get("todo_id") != ctx.todo_id:
        return (
            FailureKind.IDENTITY_MISMATCH,
            f"turn settles todo {identity.get('todo_id')!r}, not {ctx.todo_id!r}",
        )
    try:
        key = journal.settlement_identity().turn_key
    except Exception:  # a journal whose identity is not one is refused, not trusted
        key = None
    if key != ctx.turn_key or journal.turn_key != ctx.turn_key:
        return FailureKind.INVALID_IDENTITY, "the journal's identity does not hash to its turn key"
    return None


def journal_step(ctx: TurnContext, kind: StepKind, perform: Callable[[TurnJournal], Outcome]) -> Step:
    """A settlement step: guard, replay or perform, journal the receipt, commit when last."""

    def step(result: SettlementResult) -> SettlementResult:
        store = ctx.store
        with store.goal_lock(ctx.goal_id):
            journal = store.read_journal(ctx.goal_id, ctx.turn_key)
            refusal = guard(ctx, journal)
            if refusal:
                return result.fail(refusal[0], str(kind), refusal[1])
            hosted = ctx.host_result is not None and journal_host_phases(
                journal, ctx.host_result, ctx.clock()
            )
            ctx.host_result = None
            key = f"{journal.settlement_identity().effect_id[:16]}:{kind}"
            done = journal.phase(str(kind))
            if done is not None:
                if hosted:
                    store.write_journal(journal)
                return result.add(
                    SettlementReceipt(str(kind), key, result.identity.effect_id, done.receipt, replayed=True)
                )
            identity = journal.settlement_identity()
            closing = kind is StepKind.TERMINAL_CLOSEOUT
            lost = lease_lost(store.read_goal(ctx.goal_id), identity, done_is_held=closing)
            if lost:
                return result.fail(FailureKind.LEASE_LOST, str(kind), lost)
            outcome = perform(journal)
            if isinstance(outcome[0], FailureKind):
                return result.fail(outcome[0], str(kind), str(outcome[1]))
            detail, effect = outcome  # type: ignore[misc]
            fault.point("before_receipt", str(kind))
            journal.record(str(kind), ctx.clock(), detail)
            if journal.plan and str(kind) == journal.plan[-1]:
                # a todo turn keeps the agent's slot until the todo is completed: a host dying
                # between the spend and `todo complete` is sent back to complete, not to a new turn
                ends = identity.todo_id is None or "terminal_closeout" in journal.plan
                commit(store, journal, release=ctx.release_on_commit and ends)
            store.write_journal(journal)
            if not closing:  # each settled phase renews the lease (a closeout ends it)
                minutes = journal.lease_minutes or DEFAULT_LEASE_MINUTES
                if journal.status == "committed":  # spent: held for its own `todo complete`
                    minutes = max(minutes, SETTLED_HOLD_MINUTES)
                hold_lease(store, identity, ctx.clock(), lease_minutes=minutes)
            fault.point("after", str(kind))
            return result.add(SettlementReceipt(str(kind), key, result.identity.effect_id, detail), effect)

    return step


def journal_host_phases(
    journal: TurnJournal, host_result: dict[str, Any], now: datetime, duration_seconds: float | None = None
) -> bool:
    """Record `host_execute` and `typed_result` (the host's work and its typed result) in
    `journal` unless it has them; True when it changed."""
    changed = False
    if journal.phase("host_execute") is None:
        receipt: dict[str, Any] = {"reported_by": host_result.get("adapter", "host")}
        if duration_seconds is not None:
            receipt["duration_seconds"] = round(duration_seconds, 3)
        journal.record("host_execute", now, receipt)
        changed = True
    if journal.phase("typed_result") is None:
        journal.host_result = host_result
        journal.record("typed_result", now, {"status": host_result.get("status", "succeeded")})
        changed = True
    return changed


def commit(store: Store, journal: TurnJournal, *, release: bool = True) -> None:
    """Mark the journal committed and (unless told not to) release the agent's open-turn slot."""
    journal.status = "committed"
    journal.failure = None
    if release:
        release_turn(store, journal)


def release_turn(store: Store, journal: TurnJournal) -> None:
    """Free the agent's open-turn slot if it still names this turn."""

    def clear(state: Any) -> None:
        if state.open_turns.get(journal.agent_id) == journal.turn_key:
            del state.open_turns[journal.agent_id]

    store.update_goal(journal.goal_id, clear)


def subject_of(identity: Any) -> dict[str, Any]:
    """The `loopx.*` attributes that name a turn on each of its spans."""
    return {
        "goal_id": identity.goal_id,
        "agent_id": identity.agent_id,
        "todo_id": identity.todo_id,
        "turn_key": identity.turn_key,
    }


def run_validation(ctx: TurnContext) -> tuple[bool, dict[str, Any]]:
    """Run `--validation-command` in the project (exit 0 passes), once: the verdict is kept in `ctx`."""
    if ctx.validation_ran is None:
        import subprocess  # only a --validation-command runs one

        journal = ctx.store.read_journal(ctx.goal_id, ctx.turn_key) if tracing.enabled() else None
        parent = journal.trace_parent if journal is not None else None
        subject = subject_of(journal.settlement_identity()) if journal is not None else {}
        with tracing.span("loopx.validation_command", parent, **subject) as span:
            proc = subprocess.run(
                ctx.validation_command or "", shell=True, cwd=ctx.store.root, capture_output=True, check=False
            )
            if span is not None:
                span.set_attribute("loopx.exit_code", proc.returncode)
                if proc.returncode != 0:  # the writeback it judges is refused
                    tracing.failed(span, "writeback_rejected")
        ctx.validation_ran = (
            proc.returncode == 0,
            {"command": ctx.validation_command, "exit_code": proc.returncode},
        )
    return ctx.validation_ran


def validation(ctx: TurnContext) -> Step:
    """Validation: the host's verdict, or a command run here (exit 0 passes)."""

    def perform(journal: TurnJournal) -> Outcome:
        if ctx.validation_command:
            passed, detail = run_validation(ctx)
        elif ctx.validation_passed is not None:
            passed, detail = (
                ctx.validation_passed,
                {"reported": "passed" if ctx.validation_passed else "failed"},
            )
        else:
            return (
                FailureKind.WRITEBACK_REJECTED,
                "no validation: pass --validation-status or --validation-command",
            )
        if not passed:
            why = (
                f"`{detail['command']}` exited {detail['exit_code']}"
                if "command" in detail
                else "reported failed"
            )
            return FailureKind.WRITEBACK_REJECTED, f"validation failed: {why}; nothing was written back"
        return {**detail, "evidence": list(ctx.evidence)}, None

    return journal_step(ctx, StepKind.VALIDATION, perform)


def durable_writeback(ctx: TurnContext) -> Step:
    """Durable writeback: the run record (JSON, Markdown) and its history index line."""

    def perform(journal: TurnJournal) -> Outcome:
        checked = journal.phase("validation")
        if checked is None:
            return FailureKind.RECEIPT_MISSING, "writeback needs a validation receipt first"
        identity = journal.settlement_identity()
        if ctx.no_followup and "terminal_closeout" not in journal.plan:
            if identity.todo_id is None:
                return FailureKind.INVALID_IDENTITY, "--no-follow-up needs a todo turn, not a replan"
            journal.plan.append("terminal_closeout")
        now = ctx.clock()
        run_id = runlog.run_id_for(identity.effect_id)
        record = {
            "schema_version": 1,
            "run_id": run_id,
            "goal_id": identity.goal_id,
            "agent_id": identity.agent_id,
            "todo_id": identity.todo_id,
            "replan_obligation_id": identity.replan_obligation_id,
            "turn_key": identity.turn_key,
            "summary": ctx.summary.strip() or "(no summary)",
            "evidence": list(ctx.evidence) or list(checked.receipt.get("evidence", [])),
            "validation": {"passed": True, **{k: v for k, v in checked.receipt.items() if k != "evidence"}},
            "changed_files": list(ctx.changed_files),
            "started_at": iso(journal.started_at),
            "written_at": iso(now),
            "no_followup": "terminal_closeout" in journal.plan,
        }
        kind, detail = progress_of(ctx, journal)
        record["progress"] = {"kind": kind, "detail": detail}
        limit = ctx.store.read_registry().goals[identity.goal_id].no_progress_limit  # read before writing
        traced = tracing.trace_id(journal.trace_parent) if tracing.valid(journal.trace_parent) else None
        runlog.write_run(ctx.store, record, now, trace_id=traced)
        tally_progress(ctx.store, identity.goal_id, kind, detail, now, limit=limit)
        return {"run_id": run_id, "progress": kind}, f"writeback:{run_id}"

    return journal_step(ctx, StepKind.DURABLE_WRITEBACK, perform)


def progress_of(ctx: TurnContext, journal: TurnJournal) -> tuple[Progress, str]:
    """What the turn advanced: its todo, or (a replan) the todos it added or re-scoped; else none."""
    if ctx.no_progress is not None:
        return "none", ctx.no_progress.strip()[:200] or "the agent reported no progress"
    todo_id = journal.identity.get("todo_id")
    if todo_id is not None:
        return "todo_worked", f"todo {todo_id}"
    state = ctx.store.read_goal(ctx.goal_id)
    since = journal.started_at
    touched = [
        t.todo_id
        for t in state.todos
        if t.kind == "agent"
        and t.is_open_work
        and (t.created_at >= since or (t.rescoped_at is not None and t.rescoped_at >= since))
    ]
    if touched:
        return "todos_added", f"todos {', '.join(touched)}"
    return "none", "the replan turn added or re-scoped no todo"


def tally_progress(
    store: Store, goal_id: str, kind: Progress, detail: str, now: datetime, *, limit: int
) -> None:
    """Count no-progress turns in a row; at `limit`, open a gate for the goal's owner (goal lock held)."""

    def count(state: GoalState) -> int:
        state.no_progress_turns = state.no_progress_turns + 1 if kind == "none" else 0
        streak = state.no_progress_turns
        if streak >= limit:
            state.no_progress_turns = 0
        return streak

    streak = store.update_goal(goal_id, count)
    if kind == "none" and streak >= limit:
        from loopx_core.ops import gates  # here: only a loop that advanced nothing opens a gate

        gates.open_gate(
            store,
            goal_id,
            f"{streak} settled turns in a row advanced nothing (last: {detail}): re-scope the goal, "
            "add todos, or resolve this gate to let the agents try again",
            now,
            kind="no_progress",
        )


def quota_spend(ctx: TurnContext) -> Step:
    """Quota spend, bound to the turn's identity; only after its durable writeback."""

    def perform(journal: TurnJournal) -> Outcome:

        if journal.phase("durable_writeback") is None:
            return FailureKind.WRITEBACK_MISSING, "spend refused: this turn has no durable writeback yet"
        store, identity, now = ctx.store, journal.settlement_identity(), ctx.clock()
        goal = store.read_registry().goals[identity.goal_id]
        usage = compute_usage(
            goal.quota, store.ledger_since(identity.goal_id, now - lookback(goal.quota)), now
        )
        already = store.spend_receipt(identity.goal_id, identity.turn_instance_id) is not None
        if usage.exhausted and not already:
            return (
                FailureKind.BUDGET_REJECTED,
                f"quota exhausted: {usage.spent_slots}/{usage.allowed_slots} slots spent",
            )
        host = journal.phase("host_execute")
        seconds = (host.receipt.get("duration_seconds") if host else None) or (
            now - journal.started_at
        ).total_seconds()
        slots = ctx.slots if ctx.slots is not None else charge_slots(goal.quota, seconds)
        from loopx_core.ops.spend import spend  # here: only a spend builds the ledger event's model

        result = spend(
            store,
            identity.goal_id,
            identity.agent_id,
            now,
            todo_id=identity.todo_id,
            turn_instance_id=identity.turn_instance_id,
            replan_obligation_id=identity.replan_obligation_id,
            effect_id=identity.effect_id,
            slots=slots,
            minutes=seconds / 60,
        )
        event = result.event
        return {"event_id": event.event_id, "slots": event.slots}, f"spend:{event.event_id}"

    return journal_step(ctx, StepKind.QUOTA_SPEND, perform)


def terminal_closeout(ctx: TurnContext) -> Step:
    """Terminal closeout: the todo done and the goal closed, after matching writeback and spend."""

    def perform(journal: TurnJournal) -> Outcome:
        store, identity, now = ctx.store, journal.settlement_identity(), ctx.clock()
        missing = [p for p in ("durable_writeback", "quota_spend") if journal.phase(p) is None]
        if missing:
            return (
                FailureKind.RECEIPT_MISSING,
                f"closeout needs the {' and '.join(missing)} receipt(s) of this turn",
            )
        if identity.todo_id is None:
            return FailureKind.INVALID_IDENTITY, "a replan turn has no todo to close out"
        state = store.read_goal(identity.goal_id)
        others = [
            t.todo_id
            for t in state.todos
            if t.kind == "agent" and t.is_open_work and t.todo_id != identity.todo_id
        ]
        if others:
            return (
                FailureKind.CLOSEOUT_REJECTED,
                f"goal still has open todos ({', '.join(others)}): complete without --no-follow-up",
            )
        if "terminal_closeout" not in journal.plan:
            journal.plan.append("terminal_closeout")

        def close(s: Any) -> None:
            todo = s.todo(identity.todo_id)
            if todo.status != "done":
                todo.evidence.extend(ctx.evidence)
                todo.end_claim("done", now)

        store.update_goal(identity.goal_id, close)

        def finish(registry: Any) -> tuple[str, datetime]:
            goal = registry.goals[identity.goal_id]
            if goal.status != "done":  # a closeout replayed after a crash keeps the first time
                goal.status, goal.updated_at = "done", now
            return goal.objective, goal.updated_at

        objective, done_at = store.update_registry(finish)
        from loopx_core.notices.presence import has_sinks

        if has_sinks(store.root):  # the notice modules only when a sink may want them
            from loopx_core.notices import events
            from loopx_core.notices.emit import queue_notice

            queue_notice(store.root, events.goal_done(identity.goal_id, objective, done_at, now))
        return {"todo_id": identity.todo_id, "goal_status": "done"}, f"closeout:{identity.todo_id}"

    return journal_step(ctx, StepKind.TERMINAL_CLOSEOUT, perform)


STEP_BUILDERS: dict[StepKind, Callable[[TurnContext], Step]] = {
    StepKind.VALIDATION: validation,
    StepKind.DURABLE_WRITEBACK: durable_writeback,
    StepKind.QUOTA_SPEND: quota_spend,
    StepKind.TERMINAL_CLOSEOUT: terminal_closeout,
}
