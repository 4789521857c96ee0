"""`loopx todo ...`: add, update, list, show, archive, claim, release, complete, block."""

from __future__ import annotations

from typing import Annotated, Literal

import typer

from loopx_core.cli.common import AgentId, FormatOption, GoalId, TodoId, check_choice, dump, store
from loopx_core.cli.formats import Format
from loopx_core.cli.output import Table, emit, reporting
from loopx_core.clock import iso, now
from loopx_core.ops import todos

app = typer.Typer(
    add_completion=False,
    help="Todos and their leases (claim, release, complete, block).",
    no_args_is_help=True,
)

Kind = Literal["agent", "user"]
STATUSES = ("open", "claimed", "done", "blocked", "deferred")


@app.command("add")
def add(
    ctx: typer.Context,
    goal_id: GoalId,
    title: Annotated[str, typer.Option("--title", help="What to do.", show_default=False)],
    todo_id: Annotated[str | None, typer.Option("--todo-id", "-t", help="Id (default: next t<N>).")] = None,
    kind: Annotated[
        str, typer.Option("--kind", help="agent (an agent does it) or user (the owner does).")
    ] = "agent",
    priority: Annotated[int, typer.Option("--priority", "-p", help="0 runs first ... 9 runs last.")] = 2,
    capability: Annotated[
        list[str] | None, typer.Option("--capability", "-c", help="Required capability (repeat).")
    ] = None,
    bound_agent: Annotated[
        str | None, typer.Option("--bound-agent", help="Only this agent may take it.")
    ] = None,
    exclude_agent: Annotated[
        list[str] | None,
        typer.Option("--exclude-agent", help="This agent may never take it (repeat)."),
    ] = None,
    blocks_agent: Annotated[
        str | None,
        typer.Option("--blocks-agent", help="While open, this agent gets no other work."),
    ] = None,
    fmt: FormatOption = Format.auto,
) -> None:
    """Add a todo to a goal."""

    with reporting(fmt):
        check_choice("--kind", kind, ("agent", "user"))
        todo = todos.add_todo(
            store(ctx),
            goal_id,
            title,
            now(),
            todo_id=todo_id,
            kind=kind,  # type: ignore[arg-type]
            priority=priority,
            required_capabilities=capability,
            bound_agent=bound_agent,
            excluded_agents=exclude_agent,
            blocks_agent=blocks_agent,
        )
        emit(
            dump(todo),
            fmt,
            f"Added todo {todo.todo_id} (P{todo.priority}, {todo.kind}): {todo.title}",
        )


@app.command("update")
def update(
    ctx: typer.Context,
    goal_id: GoalId,
    todo_id: TodoId,
    title: Annotated[str | None, typer.Option("--title", help="New title.")] = None,
    priority: Annotated[
        int | None, typer.Option("--priority", "-p", help="0 runs first ... 9 runs last.")
    ] = None,
    capability: Annotated[
        list[str] | None,
        typer.Option("--capability", "-c", help="Required capabilities, replacing them (repeat)."),
    ] = None,
    bound_agent: Annotated[
        str | None, typer.Option("--bound-agent", help="Only this agent may take it ('' clears).")
    ] = None,
    exclude_agent: Annotated[
        list[str] | None,
        typer.Option("--exclude-agent", help="Agents that may never take it, replacing them."),
    ] = None,
    blocks_agent: Annotated[
        str | None,
        typer.Option("--blocks-agent", help="While open, this agent gets no other work ('' clears)."),
    ] = None,
    fmt: FormatOption = Format.auto,
) -> None:
    """Re-scope a todo (title, priority, capabilities, agents); a blocked one opens again."""
    with reporting(fmt):
        todo = todos.update_todo(
            store(ctx),
            goal_id,
            todo_id,
            now(),
            title=title,
            priority=priority,
            required_capabilities=capability,
            bound_agent=bound_agent,
            excluded_agents=exclude_agent,
            blocks_agent=blocks_agent,
        )
        emit(dump(todo), fmt, f"Re-scoped todo {todo.todo_id}: {todo.title} (P{todo.priority})")


@app.command("list")
def list_todos(
    ctx: typer.Context,
    goal_id: GoalId,
    status: Annotated[
        str | None, typer.Option("--status", help="Only todos with this status (open, claimed, done, ...).")
    ] = None,
    fmt: FormatOption = Format.auto,
) -> None:
    """List a goal's todos in run order."""
    with reporting(fmt):
        if status is not None:
            check_choice("--status", status, STATUSES)
        items = todos.list_todos(store(ctx), goal_id, status=status)
        emit(
            {"goal_id": goal_id, "todos": dump(items)},
            fmt,
            Table(
                ["todo", "status", "P", "kind", "claimed by", "needs", "title"],
                [
                    [
                        t.todo_id,
                        t.status,
                        t.priority,
                        t.kind,
                        t.claimed_by,
                        ", ".join(t.required_capabilities),
                        t.title,
                    ]
                    for t in items
                ],
                empty="No todos.",
            ),
        )


@app.command("show")
def show(ctx: typer.Context, goal_id: GoalId, todo_id: TodoId, fmt: FormatOption = Format.auto) -> None:
    """Show one todo: status, lease, scope, evidence."""
    with reporting(fmt):
        todo = todos.show_todo(store(ctx), goal_id, todo_id)
        data = dump(todo)
        emit(data, fmt, lambda d: "\n".join(f"{k}: {_value(v)}" for k, v in d.items()))


def _value(value: object) -> str:
    return ", ".join(map(str, value)) if isinstance(value, list) else " ".join(str(value).split())


@app.command("archive")
def archive(
    ctx: typer.Context,
    goal_id: GoalId,
    todo_id: TodoId,
    reason: Annotated[str | None, typer.Option("--reason", help="Why it is set aside.")] = None,
    fmt: FormatOption = Format.auto,
) -> None:
    """Archive a todo: deferred, never offered, kept with its history (`todo update` re-opens it).

    Exit 5 while it is claimed, 7 when it is done.
    """
    with reporting(fmt):
        todo = todos.archive_todo(store(ctx), goal_id, todo_id, now(), reason)
        emit(dump(todo), fmt, f"Archived todo {todo.todo_id}: {todo.title}")


@app.command("claim")
def claim(
    ctx: typer.Context,
    goal_id: GoalId,
    todo_id: TodoId,
    agent_id: AgentId,
    lease_minutes: Annotated[
        float, typer.Option("--lease-minutes", help="Lease length.")
    ] = todos.DEFAULT_LEASE_MINUTES,
    fmt: FormatOption = Format.auto,
) -> None:
    """Take a todo's lease (compare-and-swap: exactly one claimant wins; exit 5 if taken)."""
    with reporting(fmt):
        todo = todos.claim_todo(store(ctx), goal_id, todo_id, agent_id, now(), lease_minutes=lease_minutes)
        until = iso(todo.lease_expires_at) if todo.lease_expires_at else "-"
        emit(dump(todo), fmt, f"Claimed todo {todo.todo_id} for {agent_id} until {until}")


@app.command("release")
def release(
    ctx: typer.Context,
    goal_id: GoalId,
    todo_id: TodoId,
    agent_id: AgentId,
    fmt: FormatOption = Format.auto,
) -> None:
    """Give a held lease back (the todo is open again)."""
    with reporting(fmt):
        todo = todos.release_todo(store(ctx), goal_id, todo_id, agent_id, now())
        emit(dump(todo), fmt, f"Released todo {todo.todo_id}")


@app.command("complete")
def complete(
    ctx: typer.Context,
    goal_id: GoalId,
    todo_id: TodoId,
    agent_id: Annotated[
        str | None, typer.Option("--agent-id", "-a", help="Lease holder (agent todos).")
    ] = None,
    evidence: Annotated[
        list[str] | None, typer.Option("--evidence", "-e", help="What shows it is done (repeat).")
    ] = None,
    no_follow_up: Annotated[
        bool, typer.Option("--no-follow-up", help="Terminal closeout: the goal is done (needs --turn-key).")
    ] = False,
    turn_key: Annotated[
        str | None, typer.Option("--turn-key", "-k", help="The settled turn (for --no-follow-up).")
    ] = None,
    fmt: FormatOption = Format.auto,
) -> None:
    """Mark a todo done with its evidence (agent todos: by the lease holder).

    With --no-follow-up --turn-key K it is the turn's terminal closeout, `loopx turn closeout`
    (this spelling is kept for one release): allowed only after the turn's writeback and
    spend receipts (11 receipt_missing, 18 closeout_rejected).
    """
    from loopx_core.cli import settle
    from loopx_core.cli.turn_cmds import root_of

    settle.run_complete(
        root_of(ctx),
        goal_id,
        todo_id,
        agent_id=agent_id,
        evidence=evidence,
        no_follow_up=no_follow_up,
        turn_key=turn_key,
        fmt=fmt,
    )


@app.command("block")
def block(
    ctx: typer.Context,
    goal_id: GoalId,
    todo_id: TodoId,
    reason: Annotated[str, typer.Option("--reason", help="Why it cannot go on.", show_default=False)],
    fmt: FormatOption = Format.auto,
) -> None:
    """Mark a todo blocked (drops its lease)."""
    with reporting(fmt):
        todo = todos.block_todo(store(ctx), goal_id, todo_id, reason, now())
        emit(dump(todo), fmt, f"Blocked todo {todo.todo_id}: {reason}")
