"""`loopx turn ...`: settle turns exactly once (CLI adapter and driver).

The settlement verbs live here: `turn begin`, `turn writeback`, `turn spend`, `turn closeout`.
The older spellings `loopx writeback`, `loopx quota spend --turn-key` and `loopx todo complete
--no-follow-up --turn-key` keep working (documented aliases, kept for one release).
"""

from __future__ import annotations

from typing import Annotated

import typer

from loopx_core.cli import settle
from loopx_core.cli.common import AgentId, FormatOption, GoalId, store
from loopx_core.cli.formats import Format
from loopx_core.cli.output import emit, progress, reporting
from loopx_core.cli.settle import emit_result
from loopx_core.clock import now

app = typer.Typer(
    add_completion=False,
    help="Governed turns: begin, writeback, spend, closeout, run-once, cancel, inspect the journal.",
    no_args_is_help=True,
)

TurnKey = Annotated[
    str, typer.Option("--turn-key", "-k", help="Turn key: sha256:<64 hex>.", show_default=False)
]


def root_of(ctx: typer.Context) -> str | None:
    """The `--root` / `LOOPX_ROOT` value typer read (None: the nearest `.loopx/`)."""
    return (ctx.find_root().obj or {}).get("root")


@app.command("begin")
def begin(
    ctx: typer.Context,
    goal_id: GoalId,
    agent_id: AgentId,
    todo_id: Annotated[
        str | None, typer.Option("--todo-id", "-t", help="The todo this turn advances.")
    ] = None,
    replan: Annotated[bool, typer.Option("--replan", help="A replan turn (the frontier is empty).")] = False,
    turn_instance_id: Annotated[
        str | None,
        typer.Option(
            "--turn-instance-id", help="The instance should-run proposed (keeps retries on one turn)."
        ),
    ] = None,
    lease_minutes: Annotated[float, typer.Option("--lease-minutes", help="Todo lease length.")] = 30.0,
    fmt: FormatOption = Format.auto,
) -> None:
    """Start a turn: claim the todo (lease) and open the journal; prints the turn key."""
    settle.run_begin(
        root_of(ctx),
        goal_id,
        agent_id,
        todo_id=todo_id,
        replan=replan,
        turn_instance_id=turn_instance_id,
        lease_minutes=lease_minutes,
        fmt=fmt,
    )


@app.command("cancel")
def cancel(
    ctx: typer.Context,
    goal_id: GoalId,
    agent_id: AgentId,
    turn_key: TurnKey,
    reason: Annotated[str | None, typer.Option("--reason", help="Why.")] = None,
    fmt: FormatOption = Format.auto,
) -> None:
    """Cancel an open turn: later steps are refused as `cancelled`; the todo lease is released."""
    from loopx_core.kernel.results import turn_result
    from loopx_core.settlement.turns import cancel_turn

    with reporting(fmt):
        journal = cancel_turn(store(ctx), goal_id, agent_id, turn_key, now(), reason)
        if journal is None:
            emit(
                {"goal_id": goal_id, "agent_id": agent_id, "turn_key": turn_key, "status": "cleared"},
                fmt,
                f"Cleared agent {agent_id}'s open turn: its journal was gone. A todo it claimed keeps "
                "its lease until it expires (or `loopx todo release`).",
            )
            return
        emit_result(turn_result(journal), fmt)


@app.command("renew")
def renew(
    ctx: typer.Context,
    goal_id: GoalId,
    agent_id: AgentId,
    turn_key: TurnKey,
    lease_minutes: Annotated[
        float | None, typer.Option("--lease-minutes", help="New lease length (default: the turn's).")
    ] = None,
    fmt: FormatOption = Format.auto,
) -> None:
    """Renew the todo lease of a long-running turn (a heartbeat); exit 19 when it was lost."""
    from loopx_core.settlement.turns import renew_turn_lease

    with reporting(fmt):
        todo = renew_turn_lease(store(ctx), goal_id, agent_id, turn_key, now(), lease_minutes)
        emit(
            {"goal_id": goal_id, "agent_id": agent_id, "turn_key": turn_key, "todo": todo},
            fmt,
            lambda d: (
                f"Lease of todo {d['todo']['todo_id']} renewed until {d['todo']['lease_expires_at']}"
                if d["todo"]
                else "A replan turn holds no lease: nothing to renew"
            ),
        )


@app.command("run-once")
def run_once(
    ctx: typer.Context,
    goal_id: GoalId,
    agent_id: AgentId,
    host_command: Annotated[
        str, typer.Option("--host-command", help="Shell command doing the turn's work.", show_default=False)
    ],
    validation_command: Annotated[
        str,
        typer.Option(
            "--validation-command",
            help="Shell command that must exit 0 to accept the work.",
            show_default=False,
        ),
    ],
    resume: Annotated[
        bool, typer.Option("--resume", help="Continue this agent's open or failed turn.")
    ] = False,
    no_follow_up: Annotated[
        bool, typer.Option("--no-follow-up", help="Close the goal after this turn (terminal closeout).")
    ] = False,
    slots: Annotated[int | None, typer.Option("--slots", help="Charge exactly this many slots.")] = None,
    available_capability: Annotated[
        list[str] | None,
        typer.Option("--available-capability", "-c", help="A capability the host offers now (repeat)."),
    ] = None,
    lease_minutes: Annotated[
        float,
        typer.Option("--lease-minutes", help="Todo lease length, renewed while the host command runs."),
    ] = 30.0,
    stream: Annotated[
        bool | None,
        typer.Option(
            "--stream/--no-stream",
            help="Show the host command's output (stdout and stderr) on stderr as it runs "
            "[default: on when stderr is a terminal].",
            show_default=False,
        ),
    ] = None,
    fmt: FormatOption = Format.auto,
) -> None:
    """Run one governed turn in-process: should-run, begin, host command, validation, writeback, spend.

    Every phase is journaled; with --resume a crashed or failed turn continues without
    repeating a committed step. Prints the turn result (or the should-run packet when skipped)
    on stdout. While the host command runs, a terminal shows the elapsed time and (--stream)
    the command's output; it is captured for the turn result (`output_tail`) either way.
    """
    from loopx_core.settlement.driver import DriverOptions
    from loopx_core.settlement.driver import run_once as drive

    with reporting(fmt), progress("turn run-once") as status:
        options = DriverOptions(
            host_command,
            validation_command,
            resume=resume,
            no_followup=no_follow_up,
            slots=slots,
            available_capabilities=tuple(available_capability) if available_capability else None,
            lease_minutes=lease_minutes,
            host_output=status.write if (status.live if stream is None else stream) else None,
        )
        packet = drive(store(ctx), goal_id, agent_id, options, now)
        status.close()
        if packet.get("status") == "skipped":
            from loopx_core.render import packet_markdown

            emit(
                packet,
                fmt,
                lambda p: (
                    f"Skipped: {p['should_run']['recommended_action']}\n\n" + packet_markdown(p["should_run"])
                ),
            )
        else:
            emit_result(packet, fmt)


@app.command("inspect-journal")
def inspect_journal(
    ctx: typer.Context,
    goal_id: GoalId,
    agent_id: AgentId,
    turn_key: TurnKey,
    fmt: FormatOption = Format.auto,
) -> None:
    """Inspect a turn journal (read-only, canonical location only; never bodies or paths).

    Exit 0 whether replay is legal or blocked; 2 bad selector, 3 no such journal,
    4 malformed journal, 8 unsupported schema.
    """
    from loopx_core.ids import check_id
    from loopx_core.kernel.inspection import inspect, inspection_markdown
    from loopx_core.models.identity import check_turn_key

    with reporting(fmt):
        check_id("goal", goal_id)
        check_id("agent", agent_id)
        check_turn_key(turn_key)
        s = store(ctx)
        s.read_registry()
        with s.goal_lock(goal_id):
            journal = s.read_journal(goal_id, turn_key)
        emit(
            inspect(journal, goal_id=goal_id, agent_id=agent_id, turn_key=turn_key), fmt, inspection_markdown
        )


ALIASES = {
    "writeback": "loopx turn writeback",
    "spend": "loopx turn spend",
    "closeout": "loopx turn closeout",
}


def alias_help(verb: str) -> str:
    """The help of an old spelling: what it is an alias of, then the command's own help."""
    doc = {"writeback": writeback, "spend": spend, "closeout": closeout}[verb].__doc__ or ""
    return f"Alias of `{ALIASES[verb]}` (this spelling is kept for one release). " + doc


@app.command("writeback")
def writeback(
    ctx: typer.Context,
    goal_id: GoalId,
    agent_id: AgentId,
    turn_key: TurnKey,
    summary: Annotated[str, typer.Option("--summary", "-s", help="What the turn did.", show_default=False)],
    evidence: Annotated[
        list[str] | None, typer.Option("--evidence", "-e", help="Validation evidence (repeat).")
    ] = None,
    validation_status: Annotated[
        str | None, typer.Option("--validation-status", help="passed or failed, as the host validated it.")
    ] = None,
    validation_command: Annotated[
        str | None, typer.Option("--validation-command", help="Run this here; exit 0 passes.")
    ] = None,
    changed_file: Annotated[
        list[str] | None, typer.Option("--changed-file", help="A file the turn changed (repeat).")
    ] = None,
    todo_id: Annotated[
        str | None, typer.Option("--todo-id", "-t", help="Assert the todo this turn advanced.")
    ] = None,
    no_follow_up: Annotated[
        bool,
        typer.Option("--no-follow-up", help="Nothing follows: plan the terminal closeout after the spend."),
    ] = False,
    no_progress: Annotated[
        str | None,
        typer.Option("--no-progress", help="The turn advanced nothing, and why (counts towards the limit)."),
    ] = None,
    fmt: FormatOption = Format.auto,
) -> None:
    """Settle a turn's work: validation evidence, then the durable run record (JSON, Markdown, index).

    Repeating a committed writeback returns its receipt and changes nothing.
    """
    settle.run_writeback(
        root_of(ctx),
        goal_id,
        agent_id,
        turn_key,
        summary,
        evidence=evidence,
        validation_status=validation_status,
        validation_command=validation_command,
        changed_file=changed_file,
        todo_id=todo_id,
        no_follow_up=no_follow_up,
        no_progress=no_progress,
        fmt=fmt,
    )


@app.command("spend")
def spend(
    ctx: typer.Context,
    goal_id: GoalId,
    agent_id: AgentId,
    turn_key: TurnKey,
    todo_id: Annotated[
        str | None, typer.Option("--todo-id", "-t", help="Assert the todo the turn advanced.")
    ] = None,
    slots: Annotated[int | None, typer.Option("--slots", help="Charge exactly this many slots.")] = None,
    fmt: FormatOption = Format.auto,
) -> None:
    """Charge a settled turn to the quota, once, after its writeback (an owner's charge: `quota spend --manual`).

    Refusals: writeback_missing (13), identity_mismatch (12), budget_rejected (15),
    permission_denied (16), cancelled (17). A repeated spend returns its receipt.
    """
    settle.run_turn_spend(root_of(ctx), goal_id, agent_id, turn_key, todo_id=todo_id, slots=slots, fmt=fmt)


@app.command("closeout")
def closeout(
    ctx: typer.Context,
    goal_id: GoalId,
    agent_id: AgentId,
    turn_key: TurnKey,
    todo_id: Annotated[
        str | None, typer.Option("--todo-id", "-t", help="The todo the turn finished (marked done).")
    ] = None,
    evidence: Annotated[
        list[str] | None, typer.Option("--evidence", "-e", help="What shows it is done (repeat).")
    ] = None,
    fmt: FormatOption = Format.auto,
) -> None:
    """The turn's terminal closeout: the goal is done; only after its writeback and spend.

    Refusals: receipt_missing (11), closeout_rejected (18).
    """
    settle.run_closeout(
        root_of(ctx), goal_id, agent_id, turn_key, todo_id=todo_id, evidence=evidence, fmt=fmt
    )


writeback_alias = typer.Typer(add_completion=False)
"""`loopx writeback`: the older spelling of `turn writeback`, with its own help."""
writeback_alias.command("writeback", help=alias_help("writeback"))(writeback)
