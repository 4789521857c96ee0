"""`loopx agent`: register, list, show and remove agents."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from loopx_core.cli.common import AgentId, FormatOption, check_surface, dump, store
from loopx_core.cli.formats import Format
from loopx_core.cli.output import Table, emit, reporting
from loopx_core.clock import now

app = typer.Typer(add_completion=False, help="Agents: register, list, show, remove.", no_args_is_help=True)


@app.command("register")
def agent_register(
    ctx: typer.Context,
    agent_id: Annotated[str, typer.Option("--agent-id", "-a", help="Agent id.", show_default=False)],
    capability: Annotated[
        list[str] | None, typer.Option("--capability", "-c", help="A capability it has (repeat).")
    ] = None,
    surface: Annotated[
        str | None,
        typer.Option("--surface", help="Host it runs in, e.g. codex-app (see `loopx hosts list`)."),
    ] = None,
    host: Annotated[
        str | None, typer.Option("--host", hidden=True, help="Old name of --surface (kept for one release).")
    ] = None,
    monitor_only: Annotated[
        bool | None,
        typer.Option(
            "--monitor-only/--takes-work",
            help="Only observe and poll, never take work (default: as recorded).",
        ),
    ] = None,
    cadence_minutes: Annotated[
        float | None,
        typer.Option("--cadence-minutes", help="Its heartbeat's interval; silent for two is stalled."),
    ] = None,
    fmt: FormatOption = Format.auto,
) -> None:
    """Register an agent, or replace its capabilities (idempotent).

    `--host` is the old name of `--surface`, accepted until the next release.
    """
    from loopx_core.errors import UsageError
    from loopx_core.ops.goals import register_agent

    with reporting(fmt):
        if surface is not None and host is not None and surface != host:
            raise UsageError("--host is the old name of --surface: give one of them")
        entry = register_agent(
            store(ctx),
            agent_id,
            capability or [],
            now(),
            host=check_surface(surface if surface is not None else host),
            monitor_only=monitor_only,
            cadence_minutes=cadence_minutes,
        )
        emit(
            dump(entry),
            fmt,
            f"Registered agent {entry.agent_id} ({', '.join(entry.capabilities) or 'no capabilities'})",
        )


@app.command("list")
def agent_list(ctx: typer.Context, fmt: FormatOption = Format.auto) -> None:
    """List registered agents: capabilities, host, monitor-only, cadence."""
    from loopx_core.ops.goals import list_agents

    with reporting(fmt):
        agents = list_agents(store(ctx))
        emit(
            {"agents": dump(agents)},
            fmt,
            Table(
                ["agent", "capabilities", "surface", "monitor only", "cadence (min)"],
                [
                    [
                        a.agent_id,
                        ", ".join(a.capabilities),
                        a.host,
                        "yes" if a.monitor_only else "no",
                        f"{a.cadence_minutes:g}" if a.cadence_minutes is not None else None,
                    ]
                    for a in agents
                ],
                empty="No agents: `loopx agent register --agent-id ID`.",
            ),
        )


@app.command("show")
def agent_show(ctx: typer.Context, agent_id: AgentId, fmt: FormatOption = Format.auto) -> None:
    """Show an agent's registration and the work it holds (open turns, claimed todos)."""
    from loopx_core.ops.goals import show_agent

    with reporting(fmt):
        data = show_agent(store(ctx), agent_id)
        emit(data, fmt, _agent_doc)


def _agent_doc(data: dict[str, Any]) -> list[str | Table]:
    a = data["agent"]
    head = (
        f"Agent {a['agent_id']}: {', '.join(a['capabilities']) or 'no capabilities'}"
        + (f"; surface {a['host']}" if a.get("host") else "")
        + ("; monitor only" if a.get("monitor_only") else "")
    )
    work = Table(
        ["goal", "open turn", "claimed todos"],
        [[w["goal_id"], w["open_turn"], ", ".join(w["claimed_todos"])] for w in data["work"]],
        empty="It holds no work.",
    )
    return [head, work]


@app.command("remove")
def agent_remove(ctx: typer.Context, agent_id: AgentId, fmt: FormatOption = Format.auto) -> None:
    """Unregister an agent that holds no work (exit 5 if it does); its runs and ledger stay."""
    from loopx_core.ops.goals import remove_agent

    with reporting(fmt):
        entry = remove_agent(store(ctx), agent_id)
        emit(dump(entry), fmt, f"Removed agent {entry.agent_id} (its runs and ledger entries stay)")
