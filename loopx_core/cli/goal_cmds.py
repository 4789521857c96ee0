"""`loopx goal ...`: add, list, show, configure, stop, resume, archive."""

from __future__ import annotations

from typing import Annotated

import typer

from loopx_core.cli.common import FormatOption, GoalId, dump, store
from loopx_core.cli.formats import Format
from loopx_core.cli.output import Block, Table, emit, reporting
from loopx_core.clock import now
from loopx_core.ops import goals

app = typer.Typer(
    add_completion=False,
    help="Create and steer goals (objective, quota policy, stop/resume).",
    no_args_is_help=True,
)

Compute = Annotated[
    float | None, typer.Option("--compute", help="Share of the window's slots, 0..1 (0 pauses).")
]
WindowHours = Annotated[float | None, typer.Option("--window-hours", help="Rolling window length in hours.")]
SlotMinutes = Annotated[float | None, typer.Option("--slot-minutes", help="Minutes per quota slot.")]
MinInterval = Annotated[
    float | None,
    typer.Option("--min-interval-minutes", help="Least minutes between one agent's turns."),
]
NoProgressLimit = Annotated[
    int | None,
    typer.Option(
        "--no-progress-limit", help="No-progress turns in a row before the owner is asked (default 3)."
    ),
]


def _goal_line(entry: goals.GoalEntry) -> str:
    q = entry.quota
    return (
        f"Goal {entry.goal_id} ({entry.status}): {entry.objective}; compute {q.compute:g}, "
        f"{q.allowed_slots} slots per {q.window_hours:g}h"
    )


@app.command("add")
def add(
    ctx: typer.Context,
    goal_id: GoalId,
    objective: Annotated[
        str,
        typer.Option("--objective", "-o", help="What the goal must achieve.", show_default=False),
    ],
    compute: Compute = None,
    window_hours: WindowHours = None,
    slot_minutes: SlotMinutes = None,
    min_interval_minutes: MinInterval = None,
    no_progress_limit: NoProgressLimit = None,
    fmt: FormatOption = Format.auto,
) -> None:
    """Add a goal with its objective and quota policy (defaults: compute 1, 24h window, 1-minute slots)."""
    with reporting(fmt):
        entry = goals.add_goal(
            store(ctx),
            goal_id,
            objective,
            now(),
            compute=compute,
            window_hours=window_hours,
            slot_minutes=slot_minutes,
            min_interval_minutes=min_interval_minutes,
            no_progress_limit=no_progress_limit,
        )
        emit(dump(entry), fmt, _goal_line(entry))


@app.command("list")
def list_goals(ctx: typer.Context, fmt: FormatOption = Format.auto) -> None:
    """List goals (archived ones are `done`)."""
    with reporting(fmt):
        entries = list(store(ctx).read_registry().goals.values())
        emit(
            {"goals": dump(entries)},
            fmt,
            Table(
                ["goal", "status", "compute", "objective"],
                [[e.goal_id, e.status, f"{e.quota.compute:g}", e.objective] for e in entries],
                empty="No goals yet: `loopx goal add --goal-id ID --objective TEXT`.",
            ),
        )


@app.command("show")
def show(ctx: typer.Context, goal_id: GoalId, fmt: FormatOption = Format.auto) -> None:
    """Show a goal's registry entry and state (todos, gates, focus, health)."""
    with reporting(fmt):
        data = goals.show_goal(store(ctx), goal_id)
        emit(data, fmt, _show_doc)


def _show_doc(data: dict) -> list[Block]:
    goal, state = data["goal"], data["state"]
    blocks: list[Block] = [f"# Goal {goal['goal_id']} ({goal['status']})", goal["objective"]]
    todos = state["todos"]
    if todos:
        blocks.append(
            Table(
                ["todo", "status", "P", "kind", "claimed by", "title"],
                [
                    [t["todo_id"], t["status"], t["priority"], t["kind"], t.get("claimed_by"), t["title"]]
                    for t in todos
                ],
            )
        )
    lines = [f"- gate {g['gate_id']} ({g['status']}): {g['title']}" for g in state["gates"]]
    if state.get("waiting_on"):
        w = state["waiting_on"]
        lines.append(f"- waiting on: {w['reason']} until {w['until']}")
    return blocks + (["\n".join(lines)] if lines else [])


@app.command("configure")
def configure(
    ctx: typer.Context,
    goal_id: GoalId,
    objective: Annotated[str | None, typer.Option("--objective", "-o", help="New objective.")] = None,
    compute: Compute = None,
    window_hours: WindowHours = None,
    slot_minutes: SlotMinutes = None,
    min_interval_minutes: MinInterval = None,
    no_progress_limit: NoProgressLimit = None,
    fmt: FormatOption = Format.auto,
) -> None:
    """Change a goal's objective or quota policy.

    Exit 5 on a done goal (reopen it first).
    """
    with reporting(fmt):
        entry = goals.configure_goal(
            store(ctx),
            goal_id,
            now(),
            objective=objective,
            compute=compute,
            window_hours=window_hours,
            slot_minutes=slot_minutes,
            min_interval_minutes=min_interval_minutes,
            no_progress_limit=no_progress_limit,
        )
        emit(dump(entry), fmt, _goal_line(entry))


@app.command("stop")
def stop(ctx: typer.Context, goal_id: GoalId, fmt: FormatOption = Format.auto) -> None:
    """Stop a goal: every should-run answers paused until it is resumed.

    A stopped goal stays as it is; exit 5 on a done goal (it is not stopped).
    """
    with reporting(fmt):
        entry = goals.set_goal_status(store(ctx), goal_id, "stopped", now())
        emit(dump(entry), fmt, _goal_line(entry))


@app.command("resume")
def resume(
    ctx: typer.Context,
    goal_id: GoalId,
    reopen: Annotated[
        bool, typer.Option("--reopen", help="Make a done (archived) goal active again too.")
    ] = False,
    fmt: FormatOption = Format.auto,
) -> None:
    """Resume a stopped goal (an active one stays as it is).

    Exit 5 on a done goal unless --reopen says to make it active again.
    """
    with reporting(fmt):
        entry = goals.set_goal_status(store(ctx), goal_id, "active", now(), reopen=reopen)
        emit(dump(entry), fmt, _goal_line(entry))


@app.command("archive")
def archive(ctx: typer.Context, goal_id: GoalId, fmt: FormatOption = Format.auto) -> None:
    """Archive a goal: it is done, its state, runs and ledger kept (`goal resume --reopen` undoes it).

    A done goal stays as it is; exit 5 while an agent has an open turn in it.
    """
    with reporting(fmt):
        entry = goals.archive_goal(store(ctx), goal_id, now())
        emit(dump(entry), fmt, _goal_line(entry))
