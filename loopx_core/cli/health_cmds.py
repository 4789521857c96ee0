"""`loopx health ...`: health findings recorded by hand, and each agent's liveness.

A `high` finding puts its goal in `blocked_health` until it is cleared. Exit codes: 0 ok;
2 a bad id, severity or empty message; 3 no such goal or finding; 4 a damaged state file.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from loopx_core.cli.common import FormatOption, GoalId, store
from loopx_core.cli.formats import Format
from loopx_core.cli.output import Block, Table, emit, reporting
from loopx_core.clock import now

app = typer.Typer(
    add_completion=False,
    help="Health findings (a high one blocks its goal) and agents' liveness.",
    no_args_is_help=True,
)

Code = Annotated[
    str, typer.Option("--code", help="The finding's code, an id (e.g. disk-full).", show_default=False)
]


@app.command("add")
def health_add(
    ctx: typer.Context,
    goal_id: GoalId,
    code: Code,
    message: Annotated[str, typer.Option("--message", "-m", help="What is wrong.", show_default=False)],
    severity: Annotated[
        str, typer.Option("--severity", help="low, medium or high (high blocks the goal).")
    ] = "high",
    fmt: FormatOption = Format.auto,
) -> None:
    """Record a health finding on a goal (the same code again replaces it)."""
    from loopx_core.ops.health import add_finding

    with reporting(fmt):
        finding = add_finding(store(ctx), goal_id, code, severity, message)
        emit(
            {"goal_id": goal_id, **finding.dump()},
            fmt,
            f"Recorded {finding.severity} finding {finding.code} on goal {goal_id}"
            + (" (the goal is blocked until it is cleared)" if finding.severity == "high" else ""),
        )


@app.command("clear")
def health_clear(
    ctx: typer.Context,
    goal_id: GoalId,
    code: Annotated[str | None, typer.Option("--code", help="Only this finding (default: all).")] = None,
    fmt: FormatOption = Format.auto,
) -> None:
    """Clear a goal's health finding (or all of them)."""
    from loopx_core.ops.health import clear_findings

    with reporting(fmt):
        gone = clear_findings(store(ctx), goal_id, code)
        emit(
            {"goal_id": goal_id, "cleared": [h.dump() for h in gone]},
            fmt,
            f"Cleared {len(gone)} finding(s) on goal {goal_id}",
        )


@app.command("list")
def health_list(
    ctx: typer.Context,
    goal_id: Annotated[str | None, typer.Option("--goal-id", "-g", help="Only this goal.")] = None,
    fmt: FormatOption = Format.auto,
) -> None:
    """Recorded findings, and every agent's liveness (stalled: silent for two cadences)."""
    from loopx_core.ops.health import list_findings, liveness

    with reporting(fmt):
        s = store(ctx)
        data = {
            "findings": list_findings(s, goal_id),
            "agents": [row.to_json() for row in liveness(s, now())],
        }
        emit(data, fmt, _markdown)


def _markdown(data: dict[str, Any]) -> list[Block]:
    findings = Table(
        ["goal", "code", "severity", "message"],
        [[f["goal_id"], f["code"], f["severity"], f["message"]] for f in data["findings"]],
        title="Findings",
        empty="## Findings\n\nNone recorded.",
    )
    agents = Table(
        ["agent", "status", "cadence (min)", "last seen", "by"],
        [
            [a["agent_id"], a["status"], a["cadence_minutes"], a["last_seen"], a["seen_by"]]
            for a in data["agents"]
        ],
        title="Agents",
        empty="## Agents\n\nNo agents registered.",
    )
    return [findings, agents]
