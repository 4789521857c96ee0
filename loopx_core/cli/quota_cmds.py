"""`loopx quota ...`: should-run, status, spend, void."""

from __future__ import annotations

from typing import Annotated

import typer

from loopx_core.cli.common import AgentId, FormatOption, GoalId, option, store
from loopx_core.cli.declare import CAPABILITY, CURRENT_RRULE, SURFACE
from loopx_core.cli.formats import Format
from loopx_core.cli.output import emit, reporting
from loopx_core.clock import now

app = typer.Typer(
    add_completion=False,
    help="Compute quota: ask whether to run, charge turns, void charges.",
    no_args_is_help=True,
)


@app.command("should-run")
def should_run(
    ctx: typer.Context,
    goal_id: GoalId,
    agent_id: AgentId,
    available_capability: Annotated[list[str] | None, option(CAPABILITY)] = None,
    surface: Annotated[str | None, option(SURFACE)] = None,
    current_rrule: Annotated[str | None, option(CURRENT_RRULE)] = None,
    fmt: FormatOption = Format.auto,
) -> None:
    """Decide whether and what this agent should run now (read-only; prints the packet).

    Exit 0 with the packet, or 4 when the packet is blocked_health (state unreadable).
    """
    from loopx_core.cli.should_run import run_should_run

    code = run_should_run(
        root=(ctx.find_root().obj or {}).get("root"),
        goal_id=goal_id,
        agent_id=agent_id,
        available_capability=available_capability,
        surface=surface,
        current_rrule=current_rrule,
        fmt=fmt,
    )
    raise typer.Exit(code)


@app.command("status")
def quota_status(ctx: typer.Context, goal_id: GoalId, fmt: FormatOption = Format.auto) -> None:
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
    turn_key: Annotated[
        str | None, typer.Option("--turn-key", "-k", help="The turn to charge (after its writeback).")
    ] = None,
    todo_id: Annotated[
        str | None, typer.Option("--todo-id", "-t", help="Assert the todo the turn advanced.")
    ] = None,
    slots: Annotated[int | None, typer.Option("--slots", help="Charge exactly this many slots.")] = None,
    manual: Annotated[
        bool,
        typer.Option("--manual", help="An owner's charge bound to no turn (needs --slots or --minutes)."),
    ] = False,
    minutes: Annotated[
        float | None, typer.Option("--minutes", help="Manual charge: minutes of work.")
    ] = None,
    turn_instance_id: Annotated[
        str | None, typer.Option("--turn-instance-id", help="Manual charge: a second one for it is a no-op.")
    ] = None,
    fmt: FormatOption = Format.auto,
) -> None:
    """Charge a settled turn to the quota, bound to its identity (once, after its writeback).

    With --turn-key this is `loopx turn spend` (this spelling is kept for one release); with
    --manual an owner's charge bound to no turn.

    Refusals: writeback_missing (13), identity_mismatch (12), budget_rejected (15),
    permission_denied (16), cancelled (17). A repeated spend returns its receipt.
    """
    from loopx_core.cli import settle
    from loopx_core.cli.turn_cmds import root_of

    settle.run_quota_spend(
        root_of(ctx),
        goal_id,
        agent_id,
        turn_key=turn_key,
        todo_id=todo_id,
        slots=slots,
        manual=manual,
        minutes=minutes,
        turn_instance_id=turn_instance_id,
        fmt=fmt,
    )


@app.command("void")
def void(
    ctx: typer.Context,
    goal_id: GoalId,
    event_id: Annotated[str, typer.Option("--event-id", help="The spend event to void.", show_default=False)],
    reason: Annotated[str | None, typer.Option("--reason", help="Why.")] = None,
    fmt: FormatOption = Format.auto,
) -> None:
    """Void an earlier spend so its slots no longer count."""
    from loopx_core.ops.spend import void as record

    with reporting(fmt):
        result = record(store(ctx), goal_id, event_id, now(), reason=reason)
        emit(result.to_json(), fmt, f"Voided {event_id} ({result.event.slots} slot(s))")


@app.command("scheduler-ack")
def scheduler_ack(
    ctx: typer.Context,
    goal_id: GoalId,
    agent_id: AgentId,
    rrule: Annotated[str | None, typer.Option("--rrule", help="The rrule the host applied.")] = None,
    pause: Annotated[bool, typer.Option("--pause", help="The host paused the heartbeat.")] = False,
    fingerprint: Annotated[
        str | None, typer.Option("--fingerprint", help="scheduler_hint.fingerprint of the packet it applied.")
    ] = None,
    fmt: FormatOption = Format.auto,
) -> None:
    """Report that the host applied the recommended rrule (an unchanged poll then backs off)."""
    from loopx_core.ops import scheduler

    with reporting(fmt):
        e = scheduler.ack(
            store(ctx), goal_id, agent_id, now(), rrule=rrule, pause=pause, fingerprint=fingerprint
        )
        emit(
            e.dump(exclude_none=True),
            fmt,
            f"Heartbeat of {agent_id} on {goal_id}: {'paused' if e.paused else e.applied_rrule}"
            + (f" ({e.unchanged_polls} unchanged polls)" if e.unchanged_polls else ""),
        )


@app.command("scheduler-fail")
def scheduler_fail(
    ctx: typer.Context,
    goal_id: GoalId,
    agent_id: AgentId,
    error: Annotated[
        str, typer.Option("--error", help="What went wrong applying the rrule.", show_default=False)
    ],
    fmt: FormatOption = Format.auto,
) -> None:
    """Report that the host could not apply the recommended rrule."""
    from loopx_core.ops import scheduler

    with reporting(fmt):
        e = scheduler.fail(store(ctx), goal_id, agent_id, now(), error=error)
        emit(
            e.dump(exclude_none=True),
            fmt,
            f"Recorded scheduler failure #{e.failures}: {e.last_error}",
        )
