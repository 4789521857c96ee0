"""`loopx quota ...`: should-run, status, spend, void."""

from __future__ import annotations

from typing import Annotated

import typer

from loopx_core.cli.common import AgentId, GoalId, JsonFormat, store
from loopx_core.cli.output import Format, emit, reporting
from loopx_core.clock import now, parse_time

app = typer.Typer(help="Compute quota: ask whether to run, charge turns, void charges.", no_args_is_help=True)


@app.command("should-run")
def should_run(
    ctx: typer.Context,
    goal_id: GoalId,
    agent_id: AgentId,
    available_capability: Annotated[
        list[str] | None,
        typer.Option("--available-capability", "-c", help="A capability the host offers now (repeat)."),
    ] = None,
    surface: Annotated[
        str | None, typer.Option("--surface", help="Host surface asking, e.g. codex-app.")
    ] = None,
    fmt: JsonFormat = Format.json,
) -> None:
    """Decide whether and what this agent should run now (read-only; prints the packet).

    Exit 0 with the packet, or 4 when the packet is blocked_health (state unreadable).
    """
    from loopx_core.cli.should_run import run_should_run

    root = (ctx.find_root().obj or {}).get("root")
    code = run_should_run(root, goal_id, agent_id, available_capability, surface, fmt)
    raise typer.Exit(code)


@app.command("status")
def quota_status(ctx: typer.Context, goal_id: GoalId, fmt: JsonFormat = Format.json) -> None:
    """Show a goal's quota policy and the slots spent in the current window."""
    from loopx_core.ops.spend import quota_status as compute

    with reporting(fmt):
        data = compute(store(ctx), goal_id, now())
        emit(
            data,
            fmt,
            lambda d: (
                f"Goal {d['goal_id']}: {d['spent_slots']}/{d['allowed_slots']} slots spent "
                f"({d['remaining_slots']} left)"
                + (f"; throttled until {d['released_at']}" if d["throttled"] else "")
            ),
        )


@app.command("spend")
def spend(
    ctx: typer.Context,
    goal_id: GoalId,
    agent_id: AgentId,
    todo_id: Annotated[str | None, typer.Option("--todo-id", "-t", help="Todo the turn advanced.")] = None,
    turn_instance_id: Annotated[
        str | None,
        typer.Option("--turn-instance-id", help="Turn instance (a second spend for it is a no-op)."),
    ] = None,
    replan_obligation_id: Annotated[
        str | None,
        typer.Option("--replan-obligation-id", help="Replan obligation the turn settled."),
    ] = None,
    slots: Annotated[int | None, typer.Option("--slots", help="Charge exactly this many slots.")] = None,
    minutes: Annotated[
        float | None, typer.Option("--minutes", help="Measured turn length in minutes.")
    ] = None,
    started_at: Annotated[
        str | None,
        typer.Option("--started-at", help="Turn start (ISO-8601); now - start is charged."),
    ] = None,
    fmt: JsonFormat = Format.json,
) -> None:
    """Charge a turn to the goal's quota: --slots, or its measured duration (at least 1 slot)."""
    from loopx_core.ops.spend import spend as record

    with reporting(fmt):
        result = record(
            store(ctx),
            goal_id,
            agent_id,
            now(),
            todo_id=todo_id,
            turn_instance_id=turn_instance_id,
            replan_obligation_id=replan_obligation_id,
            slots=slots,
            minutes=minutes,
            started_at=parse_time(started_at) if started_at else None,
        )
        e = result.event
        emit(
            result.to_json(),
            fmt,
            f"{'Already charged' if result.replayed else 'Charged'} {e.slots} slot(s) to {goal_id} ({e.event_id})",
        )


@app.command("void")
def void(
    ctx: typer.Context,
    goal_id: GoalId,
    event_id: Annotated[str, typer.Option("--event-id", help="The spend event to void.", show_default=False)],
    reason: Annotated[str | None, typer.Option("--reason", help="Why.")] = None,
    fmt: JsonFormat = Format.json,
) -> None:
    """Void an earlier spend so its slots no longer count."""
    from loopx_core.ops.spend import void as record

    with reporting(fmt):
        result = record(store(ctx), goal_id, event_id, now(), reason=reason)
        emit(result.to_json(), fmt, f"Voided {event_id} ({result.event.slots} slot(s))")
