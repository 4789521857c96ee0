"""The LoopX tools the MCP server offers, as plain functions (no SDK import).

Their signatures are the tools' input schemas: the server derives a strict argument model
from each (unknown arguments, wrong types and non-finite numbers refused), and ids and
minutes are typed with the input domain (`loopx_core.models.domain`), so a call is checked
against the same domain as the CLI before any tool runs. Their docstrings are the tools'
descriptions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from loopx_core.clock import now
from loopx_core.errors import UsageError
from loopx_core.ops.todos import DEFAULT_LEASE_MINUTES
from loopx_core.schema.domain import Count, Id, Minutes, Priority
from loopx_core.store.files import FileStore

Tool = Callable[..., dict[str, Any]]


def loopx_tools(store: Callable[[], FileStore]) -> list[Tool]:
    """Every LoopX tool, each opening the store through `store()` on every call."""

    def quota_should_run(
        goal_id: Id,
        agent_id: Id,
        available_capabilities: list[str] | None = None,
        surface: str | None = None,
        current_rrule: str | None = None,
    ) -> dict[str, Any]:
        """Decide whether and what this agent should run now (read-only): the should-run packet."""
        from loopx_core.host_hints import hint_contributors
        from loopx_core.ops.tick import tick_packet

        return tick_packet(
            store(),
            goal_id,
            agent_id,
            now(),
            available_capabilities=tuple(available_capabilities) if available_capabilities else None,
            surface=surface,
            current_rrule=current_rrule,
            contributors=hint_contributors(surface),
        )

    def todo_list(
        goal_id: Id, status: Literal["open", "claimed", "done", "blocked", "deferred"] | None = None
    ) -> dict[str, Any]:
        """The goal's todos in run order (optionally one status)."""
        from loopx_core.ops.todos import list_todos

        items = list_todos(store(), goal_id, status=status)
        return {"goal_id": goal_id, "todos": [t.dump(exclude_none=True) for t in items]}

    def todo_claim(
        goal_id: Id, todo_id: Id, agent_id: Id, lease_minutes: Minutes = DEFAULT_LEASE_MINUTES
    ) -> dict[str, Any]:
        """Take a todo's lease (compare-and-swap; a live lease of another agent is a conflict)."""
        from loopx_core.ops.todos import claim_todo

        return claim_todo(store(), goal_id, todo_id, agent_id, now(), lease_minutes=lease_minutes).dump(
            exclude_none=True
        )

    def todo_complete(
        goal_id: Id,
        todo_id: Id,
        agent_id: Id,
        evidence: list[str] | None = None,
        no_follow_up: bool = False,
        turn_key: str | None = None,
    ) -> dict[str, Any]:
        """Complete a todo; with no_follow_up and turn_key it is the turn's terminal closeout."""
        if no_follow_up or turn_key:
            if not (no_follow_up and turn_key):
                raise UsageError("a terminal closeout needs no_follow_up and turn_key together")
            return settle(
                store(),
                goal_id,
                agent_id,
                turn_key,
                "terminal_closeout",
                todo_id=todo_id,
                evidence=evidence or [],
            )
        from loopx_core.ops.todos import complete_todo

        return complete_todo(store(), goal_id, todo_id, now(), agent_id=agent_id, evidence=evidence).dump(
            exclude_none=True
        )

    def turn_begin(
        goal_id: Id,
        agent_id: Id,
        todo_id: Id | None = None,
        replan: bool = False,
        turn_instance_id: str | None = None,
        lease_minutes: Minutes = DEFAULT_LEASE_MINUTES,
    ) -> dict[str, Any]:
        """Start a turn: claim the todo (for lease_minutes) and open its journal; returns the turn key."""
        from loopx_core.kernel.results import turn_result
        from loopx_core.settlement.turns import begin_turn

        journal, replayed = begin_turn(
            store(),
            goal_id,
            agent_id,
            now(),
            todo_id=todo_id,
            replan=replan,
            instance=turn_instance_id,
            lease_minutes=lease_minutes,
        )
        return {**turn_result(journal, adapter="mcp"), "replayed": replayed}

    def writeback(
        goal_id: Id,
        agent_id: Id,
        turn_key: str,
        summary: str,
        validation_status: Literal["passed", "failed"],
        evidence: list[str] | None = None,
        changed_files: list[str] | None = None,
        no_follow_up: bool = False,
        no_progress: str | None = None,
    ) -> dict[str, Any]:
        """Settle the turn's work: validation evidence, then the durable run record.

        `no_progress` (a reason) says the turn advanced nothing; a replan turn that added or
        re-scoped no todo counts as such too; too many in a row open a gate for the owner.
        """
        from loopx_core.settlement.steps import TurnContext
        from loopx_core.settlement.turns import writeback_turn

        ctx = TurnContext(
            store(),
            goal_id,
            agent_id,
            turn_key,
            now,
            summary=summary,
            evidence=evidence or [],
            validation_passed=validation_status == "passed",
            changed_files=changed_files or [],
            no_followup=no_follow_up,
            no_progress=no_progress,
        )
        return writeback_turn(ctx, adapter="mcp")

    def quota_spend(goal_id: Id, agent_id: Id, turn_key: str, todo_id: Id | None = None) -> dict[str, Any]:
        """Charge the turn (after its writeback), bound to its identity; a repeat returns the receipt."""
        return settle(store(), goal_id, agent_id, turn_key, "quota_spend", todo_id=todo_id)

    def turn_renew(
        goal_id: Id, agent_id: Id, turn_key: str, lease_minutes: Minutes | None = None
    ) -> dict[str, Any]:
        """Renew the todo lease of a long-running turn (a heartbeat; default: the turn's length)."""
        from loopx_core.settlement.turns import renew_turn_lease

        todo = renew_turn_lease(store(), goal_id, agent_id, turn_key, now(), lease_minutes)
        return {"goal_id": goal_id, "agent_id": agent_id, "turn_key": turn_key, "todo": todo}

    def turn_inspect_journal(goal_id: Id, agent_id: Id, turn_key: str) -> dict[str, Any]:
        """The allowlisted, read-only inspection of a turn journal."""
        from loopx_core.ids import check_id
        from loopx_core.kernel.inspection import inspect
        from loopx_core.models.identity import check_turn_key

        check_id("goal", goal_id)
        check_id("agent", agent_id)
        check_turn_key(turn_key)
        s = store()
        with s.goal_lock(goal_id):
            journal = s.read_journal(goal_id, turn_key)
        return inspect(journal, goal_id=goal_id, agent_id=agent_id, turn_key=turn_key)

    def status() -> dict[str, Any]:
        """Every goal's quota state, most urgent first."""
        from loopx_core.status import attention

        return {"goals": attention(store(), now())}

    def todo_add(
        goal_id: Id,
        title: str,
        priority: Priority = 2,
        required_capabilities: list[str] | None = None,
        kind: Literal["agent", "user"] = "agent",
        bound_agent: Id | None = None,
        blocks_agent: Id | None = None,
    ) -> dict[str, Any]:
        """Add a todo (a replan turn's work: each new todo is its progress)."""
        from loopx_core.ops.todos import add_todo

        todo = add_todo(
            store(),
            goal_id,
            title,
            now(),
            kind=kind,
            priority=priority,
            required_capabilities=required_capabilities,
            bound_agent=bound_agent,
            blocks_agent=blocks_agent,
        )
        return todo.dump(exclude_none=True)

    def todo_update(
        goal_id: Id,
        todo_id: Id,
        title: str | None = None,
        priority: Priority | None = None,
        required_capabilities: list[str] | None = None,
        bound_agent: str | None = None,
        blocks_agent: str | None = None,
    ) -> dict[str, Any]:
        """Re-scope a todo (an empty agent string clears it; a blocked todo opens again)."""
        from loopx_core.ops.todos import update_todo

        todo = update_todo(
            store(),
            goal_id,
            todo_id,
            now(),
            title=title,
            priority=priority,
            required_capabilities=required_capabilities,
            bound_agent=bound_agent,
            blocks_agent=blocks_agent,
        )
        return todo.dump(exclude_none=True)

    def turn_cancel(goal_id: Id, agent_id: Id, turn_key: str, reason: str | None = None) -> dict[str, Any]:
        """Cancel this agent's open turn (or clear one whose journal is gone); its lease is released."""
        from loopx_core.kernel.results import turn_result
        from loopx_core.settlement.turns import cancel_turn

        journal = cancel_turn(store(), goal_id, agent_id, turn_key, now(), reason)
        if journal is None:
            return {"goal_id": goal_id, "agent_id": agent_id, "turn_key": turn_key, "status": "cleared"}
        return turn_result(journal, adapter="mcp")

    def focus_wait(
        goal_id: Id,
        reason: str,
        for_minutes: Minutes,
        poll_every_minutes: Minutes | None = None,
    ) -> dict[str, Any]:
        """Make the goal wait on external evidence for for_minutes (polled on a cadence if given)."""
        from loopx_core.ops.gates import focus_wait as wait

        waiting = wait(
            store(), goal_id, reason, now(), for_minutes=for_minutes, poll_every_minutes=poll_every_minutes
        )
        return waiting.dump(exclude_none=True)

    def focus_poll(goal_id: Id) -> dict[str, Any]:
        """Record a monitor poll that found nothing yet (the next poll is due one cadence later)."""
        from loopx_core.ops.gates import focus_poll as poll

        return poll(store(), goal_id, now()).dump(exclude_none=True)

    def focus_done(goal_id: Id, evidence: str | None = None) -> dict[str, Any]:
        """End the focus wait with the evidence that arrived (clearing twice is harmless)."""
        from loopx_core.ops.gates import focus_clear

        ended = focus_clear(store(), goal_id, evidence=evidence)
        return {
            "goal_id": goal_id,
            "cleared": ended.dump(exclude_none=True) if ended else None,
        }

    def gate_open(goal_id: Id, title: str, blocks_agent: Id | None = None) -> dict[str, Any]:
        """Open an operator gate: it stops that agent (or every agent) until the owner resolves it."""
        from loopx_core.ops.gates import open_gate

        return open_gate(store(), goal_id, title, now(), blocks_agent=blocks_agent).dump(exclude_none=True)

    def gate_resolve(goal_id: Id, gate_id: Id, resolution: str | None = None) -> dict[str, Any]:
        """Resolve an open gate (as the owner decided)."""
        from loopx_core.ops.gates import resolve_gate

        return resolve_gate(store(), goal_id, gate_id, now(), resolution=resolution).dump(exclude_none=True)

    def history(
        goal_id: Id | None = None,
        agent_id: Id | None = None,
        todo_id: Id | None = None,
        limit: Count = 20,
    ) -> dict[str, Any]:
        """What each turn did: the run history, newest first."""
        from loopx_core.ops.history import history as runs

        return {"runs": runs(store(), goal_id=goal_id, agent_id=agent_id, todo_id=todo_id, limit=limit)}

    return [
        quota_should_run,
        todo_list,
        todo_claim,
        todo_complete,
        turn_begin,
        writeback,
        quota_spend,
        turn_renew,
        turn_inspect_journal,
        status,
        todo_add,
        todo_update,
        turn_cancel,
        focus_wait,
        focus_poll,
        focus_done,
        gate_open,
        gate_resolve,
        history,
    ]


def settle(
    s: FileStore, goal_id: str, agent_id: str, turn_key: str, step: str, **extra: Any
) -> dict[str, Any]:
    """Run one settlement step of the turn through the shared settlement path (MCP adapter)."""
    from loopx_core.kernel.algebra import StepKind
    from loopx_core.settlement.steps import TurnContext
    from loopx_core.settlement.turns import settle_steps

    return settle_steps(
        TurnContext(s, goal_id, agent_id, turn_key, now, **extra), [StepKind(step)], adapter="mcp"
    )


INSTRUCTIONS = (
    "LoopX governs this long-running loop. Each turn: call quota_should_run; if should_run is false, stop. "
    "Otherwise turn_begin, do the work, writeback (with validation evidence), quota_spend, then todo_complete. "
    "Errors carry a JSON object whose code names the refusal (e.g. writeback_missing)."
)
