"""`loopx gate ...` and `loopx focus ...`: what makes an agent wait."""

from __future__ import annotations

from typing import Annotated

import typer

from loopx_core.cli.common import AgentId, FormatOption, GoalId, dump, store
from loopx_core.cli.formats import Format
from loopx_core.cli.output import emit, reporting
from loopx_core.clock import iso, now, parse_time
from loopx_core.ops import gates

gate_app = typer.Typer(
    add_completion=False,
    help="Operator gates: stop an agent (or all) until the owner resolves them.",
    no_args_is_help=True,
)
focus_app = typer.Typer(
    add_completion=False,
    help="Focus waits: pause work while waiting on external evidence.",
    no_args_is_help=True,
)

GateId = Annotated[str, typer.Option("--gate-id", help="Gate id.", show_default=False)]


@gate_app.command("open")
def gate_open(
    ctx: typer.Context,
    goal_id: GoalId,
    title: Annotated[str, typer.Option("--title", help="What the owner must decide.", show_default=False)],
    gate_id: Annotated[str | None, typer.Option("--gate-id", help="Id (default: gate-<N>).")] = None,
    blocks_agent: Annotated[
        str | None, typer.Option("--blocks-agent", help="Agent it stops (default: all).")
    ] = None,
    fmt: FormatOption = Format.auto,
) -> None:
    """Open an operator gate."""
    with reporting(fmt):
        gate = gates.open_gate(store(ctx), goal_id, title, now(), gate_id=gate_id, blocks_agent=blocks_agent)
        emit(dump(gate), fmt, f"Opened gate {gate.gate_id}: {gate.title}")


@gate_app.command("resolve")
def gate_resolve(
    ctx: typer.Context,
    goal_id: GoalId,
    gate_id: GateId,
    resolution: Annotated[str | None, typer.Option("--resolution", help="The owner's answer.")] = None,
    fmt: FormatOption = Format.auto,
) -> None:
    """Resolve an operator gate."""
    with reporting(fmt):
        gate = gates.resolve_gate(store(ctx), goal_id, gate_id, now(), resolution=resolution)
        emit(dump(gate), fmt, f"Resolved gate {gate.gate_id}")


@focus_app.command("wait")
def focus_wait(
    ctx: typer.Context,
    goal_id: GoalId,
    reason: Annotated[str, typer.Option("--reason", help="The evidence awaited.", show_default=False)],
    until: Annotated[str | None, typer.Option("--until", help="Resume time (ISO-8601 with offset).")] = None,
    for_minutes: Annotated[
        float | None, typer.Option("--for-minutes", help="Resume after this many minutes.")
    ] = None,
    poll_every_minutes: Annotated[
        float | None,
        typer.Option("--poll-every-minutes", help="Let an agent poll for the evidence this often."),
    ] = None,
    fmt: FormatOption = Format.auto,
) -> None:
    """Make the goal wait on external evidence until a time."""
    with reporting(fmt):
        waiting = gates.focus_wait(
            store(ctx),
            goal_id,
            reason,
            now(),
            until=parse_time(until, what="--until") if until is not None else None,
            for_minutes=for_minutes,
            poll_every_minutes=poll_every_minutes,
        )
        emit(
            dump(waiting),
            fmt,
            f"Goal {goal_id} waits on {waiting.reason} until {iso(waiting.until)}",
        )


@focus_app.command("poll")
def focus_poll(
    ctx: typer.Context, goal_id: GoalId, agent_id: AgentId, fmt: FormatOption = Format.auto
) -> None:
    """Record a monitor poll that found nothing yet."""
    from loopx_core.ids import check_id

    with reporting(fmt):
        check_id("agent", agent_id)
        waiting = gates.focus_poll(store(ctx), goal_id, now())
        emit(dump(waiting), fmt, f"Poll recorded for goal {goal_id} by {agent_id}")


@focus_app.command("clear")
def focus_clear(
    ctx: typer.Context,
    goal_id: GoalId,
    evidence: Annotated[
        str | None, typer.Option("--evidence", "-e", help="The evidence that arrived.")
    ] = None,
    fmt: FormatOption = Format.auto,
) -> None:
    """End the focus wait."""
    with reporting(fmt):
        cleared = gates.focus_clear(store(ctx), goal_id, evidence=evidence)
        emit(
            {"cleared": dump(cleared) if cleared else None},
            fmt,
            f"Goal {goal_id} is no longer waiting",
        )
