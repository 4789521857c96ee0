"""`loopx init`, `status`, `start` and `history`: a project's state as a whole."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from loopx_core.cli.common import FormatOption, check_surface, store
from loopx_core.cli.formats import Format
from loopx_core.cli.output import Table, emit, reporting
from loopx_core.clock import now

app = typer.Typer(add_completion=False)


@app.command("init")
def init(
    ctx: typer.Context,
    store_target: Annotated[
        str | None,
        typer.Option(
            "--store",
            help="Where the state lives: `files` (default) or a PostgreSQL DSN, recorded without credentials.",
            show_default=False,
        ),
    ] = None,
    fmt: FormatOption = Format.auto,
) -> None:
    """Create the project's empty registry (safe to run twice): in .loopx/, or in the store named.

    Also writes .loopx/.gitignore (kept if it exists) for what must not be committed: locks,
    backups, quarantine, notices (sink URLs may hold tokens), replaced copies, temp files.

    `--store postgresql://host/db?sslmode=require` (or `LOOPX_STORE`) records a PostgreSQL team
    store in .loopx/store.json; the password comes from PGPASSWORD, PGPASSFILE or a service.
    """
    from loopx_core.cli.store_cmds import init_store, write_gitignore
    from loopx_core.store.roots import find_root

    with reporting(fmt):
        s, created = init_store(find_root((ctx.find_root().obj or {}).get("root")), store_target)
        write_gitignore(s.root)
        shown = _shown_root(s.root)
        where = ".loopx/" if s.label == "files" else s.label
        emit(
            {"root": shown, "created": created, **({} if s.label == "files" else {"store": s.label})},
            fmt,
            f"{'Initialised' if created else 'Already initialised:'} {where} in {shown}",
        )


def _shown_root(root: Path) -> str:
    """The project root relative to the working folder, else its name: never a resolved path."""
    try:
        return str(root.relative_to(Path.cwd().resolve())) or "."
    except ValueError:
        return root.name or "."


@app.command("status")
def status(ctx: typer.Context, fmt: FormatOption = Format.auto) -> None:
    """Every goal's quota state, most urgent first (who must act next)."""
    from loopx_core.render import status_markdown
    from loopx_core.status import attention

    with reporting(fmt):
        s = store(ctx)
        rows = attention(s, now())
        emit(
            {"store": s.label, "goals": rows},
            fmt,
            lambda d: f"Store: {d['store']}\n\n" + status_markdown(d["goals"]),
            lambda d: [f"Store: {d['store']}", _status_table(d["goals"])],
        )


def _to_the_second(at: str | None) -> str | None:
    """An ISO time as a person reads it in a table: to the second (`...:36Z`, not `...:36.505790Z`)."""
    if at is None or "." not in at:
        return at
    whole, _, rest = at.partition(".")
    return whole + rest.lstrip("0123456789")


def _status_table(rows: list[dict[str, Any]]) -> Table:
    return Table(
        ["goal", "state", "who acts", "todos open/done", "slots", "next eligible", "reason", "last run"],
        [
            [
                r["goal_id"],
                r["state"],
                r["who_acts"],
                f"{r['todos_open']}/{r['todos_done']}",
                f"{r['spent_slots']}/{r['allowed_slots']}" if r["spent_slots"] is not None else None,
                _to_the_second(r["next_eligible_at"]),
                r["reason"],
                f"{_to_the_second(run['at'])} {run['agent_id']}: {run['summary'][:60]}"
                if (run := r.get("last_run"))
                else None,
            ]
            for r in rows
        ],
        empty="No goals yet: `loopx goal add --goal-id ID --objective TEXT`.",
    )


@app.command("start")
def start(
    ctx: typer.Context,
    title: Annotated[str, typer.Option("--title", help="The task, in words.", show_default=False)],
    agent_id: Annotated[
        str,
        typer.Option("--agent-id", "-a", help="The agent that asks (registered if new).", show_default=False),
    ],
    goal_id: Annotated[
        str | None,
        typer.Option("--goal-id", "-g", help="Its goal (default: the only active one, else a new one)."),
    ] = None,
    objective: Annotated[
        str | None, typer.Option("--objective", "-o", help="A new goal's objective (default: the task).")
    ] = None,
    surface: Annotated[
        str | None, typer.Option("--surface", help="The host asking, e.g. claude-code.")
    ] = None,
    fmt: FormatOption = Format.auto,
) -> None:
    """Start from a task: create what is missing, add the task as a todo, print the first should-run."""
    from loopx_core.decide.packet import build_packet, load_inputs
    from loopx_core.host_hints import hint_contributors
    from loopx_core.ops.start import start as begin
    from loopx_core.render import packet_markdown

    with reporting(fmt):
        surface = check_surface(surface)
        s = store(ctx)
        started = begin(
            s, title, now(), agent_id=agent_id, goal_id=goal_id, objective=objective, host=surface
        )
        inputs = load_inputs(s, started.goal_id, agent_id, now(), surface=surface)
        packet = build_packet(inputs, contributors=hint_contributors(surface))
        data = {
            "goal_id": started.goal_id,
            "todo_id": started.todo.todo_id,
            "created_goal": started.created_goal,
            "registered_agent": started.registered_agent,
            "should_run": packet,
        }
        emit(
            data,
            fmt,
            lambda d: (
                f"Added todo {d['todo_id']} to goal {d['goal_id']}"
                + (" (new goal)" if d["created_goal"] else "")
                + ".\n\n"
                + packet_markdown(d["should_run"])
            ),
        )


@app.command("history")
def history(
    ctx: typer.Context,
    goal_id: Annotated[str | None, typer.Option("--goal-id", "-g", help="Only this goal.")] = None,
    agent_id: Annotated[str | None, typer.Option("--agent-id", "-a", help="Only this agent's runs.")] = None,
    todo_id: Annotated[str | None, typer.Option("--todo-id", "-t", help="Only runs on this todo.")] = None,
    since: Annotated[str | None, typer.Option("--since", help="Only runs at or after (ISO-8601).")] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", help="At most this many, newest first.")] = 20,
    fmt: FormatOption = Format.auto,
) -> None:
    """What each turn did: the run history across goals, newest first."""
    from loopx_core.clock import parse_time
    from loopx_core.ops.history import history as runs
    from loopx_core.render import history_markdown

    with reporting(fmt):
        rows = runs(
            store(ctx),
            goal_id=goal_id,
            agent_id=agent_id,
            todo_id=todo_id,
            since=parse_time(since, what="--since") if since is not None else None,
            limit=limit,
        )
        emit({"runs": rows}, fmt, lambda d: history_markdown(d["runs"]), lambda d: _history_table(d["runs"]))


def _history_table(rows: list[dict[str, Any]]) -> Table:
    traced = any(r.get("trace_id") for r in rows)  # a trace column only where turns were traced
    return Table(
        ["at", "goal", "agent", "subject", "validation", "progress", "summary"] + ["trace"] * traced,
        [
            [
                r["at"],
                r["goal_id"],
                r["agent_id"],
                r.get("todo_id") or "replan",
                r["validation"],
                f"{r['progress']}: {r['progress_detail']}" if r.get("progress_detail") else r["progress"],
                r["summary"],
            ]
            + [r.get("trace_id") or ""] * traced
            for r in rows
        ],
        empty="No runs yet: a turn's writeback records one.",
    )
