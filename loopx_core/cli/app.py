"""The typer application: `loopx` and its command groups."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from typer.core import TyperGroup

from loopx_core import __version__
from loopx_core.cli import (
    dashboard_cmds,
    doctor_cmds,
    goal_cmds,
    health_cmds,
    hook_cmds,
    hosts_cmds,
    notify_cmds,
    quota_cmds,
    store_cmds,
    todo_cmds,
    turn_cmds,
    wait_cmds,
)
from loopx_core.cli.common import AgentId, FormatOption, check_surface, dump, store, suggestion
from loopx_core.cli.output import (
    Format,
    Table,
    emit,
    report_internal,
    report_usage,
    reporting,
    requested_format,
)
from loopx_core.clock import now

HELP = """LoopX keeps the state of long-running agent loops: goals, todos, gates, quota, receipts.

Start with `loopx init`, add a goal and todos, register agents, then let each heartbeat
ask `loopx quota should-run --goal-id G --agent-id A` what to do.

Exit codes: 0 ok, 1 internal error, 2 usage, 3 not found, 4 state invalid,
5 conflict, 6 lock timeout, 7 refused, 8 unsupported schema, 9 drift; settlement refusals
10-18 (see docs/cli.md).
"""

HOOK_COMMANDS = ("hook",)
"""Commands a host runs as a hook: their usage errors exit 1, since hosts read 2 as "block"."""


class LoopxGroup(TyperGroup):
    """The root command: usage errors and unexpected exceptions as LoopX reports them.

    A usage error is one line on stderr (and the JSON error object under `--format json`),
    exit 2; an unexpected exception is one `internal error` line, exit 1: never a traceback.
    """

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        """Run the command line; exit with its documented code."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        words = list(sys.argv[1:] if args is None else args)
        try:
            result = super().main(words, prog_name, complete_var, False, **extra)
        except SystemExit:
            raise
        except (typer.Abort, EOFError):
            sys.stderr.write("loopx: aborted\n")
            raise SystemExit(1) from None
        except Exception as error:  # the last line of defence against a traceback
            if _is_usage_error(error):
                _exit_usage(error, words)
            raise SystemExit(report_internal(error, requested_format(words, None))) from None
        raise SystemExit(result if isinstance(result, int) else 0)


def _is_usage_error(error: Exception) -> bool:
    """Click's own usage errors (bad option, missing value), whichever click typer bundles."""
    return hasattr(error, "format_message") and hasattr(error, "exit_code")


def _exit_usage(error: Any, words: list[str]) -> NoReturn:
    ctx = getattr(error, "ctx", None)
    command = getattr(ctx, "command", None)
    if type(error).__name__ == "NoArgsIsHelpError":
        error.show()  # the help text, as click prints it
        raise SystemExit(int(error.exit_code))
    default = next(
        (
            p.default
            for p in getattr(command, "params", [])
            if p.name == "fmt" and isinstance(p.default, Format)
        ),
        None,
    )
    path = " ".join(["loopx", *(getattr(ctx, "command_path", "") or "loopx").split()[1:]])
    hook = path.split()[1:2] == ["hook"] or (words[:1] and words[0] in HOOK_COMMANDS)
    message = (
        f"{error.format_message().replace('Value error, ', '')}{_hint(error, words)} (see `{path} --help`)"
    )
    report_usage(
        message, requested_format(words, default), prefix="loopx: hook: " if hook else "loopx: error: "
    )
    raise SystemExit(1 if hook else int(getattr(error, "exit_code", 2)))


def _hint(error: Any, words: list[str]) -> str:
    """` (did you mean X?)` for a mistyped choice value (click suggests commands and options)."""
    param = getattr(error, "param", None)
    choices = _choices(param)
    given = _value_of(list(getattr(param, "opts", [])), words) if choices else None
    return suggestion(given, choices) if given else ""


def _choices(param: Any) -> list[str]:
    """The values a parameter takes, when it is a choice (an Enum, as typer declares them)."""
    bare = getattr(getattr(param, "type_descriptor", None), "annotation", None)
    if isinstance(bare, type) and issubclass(bare, Enum):
        return [str(member.value) for member in bare]
    return [str(c) for c in getattr(getattr(param, "type", None), "choices", None) or []]


def _value_of(opts: list[str], words: list[str]) -> str | None:
    """The last value `words` gives an option named by `opts` (`--opt V`, `--opt=V`, `-oV`)."""
    found = None
    for index, word in enumerate(words):
        for opt in opts:
            if word == opt and index + 1 < len(words):
                found = words[index + 1]
            elif word.startswith(opt + "=") and opt.startswith("--"):
                found = word[len(opt) + 1 :]
            elif len(opt) == 2 and word.startswith(opt) and len(word) > 2 and not word.startswith("--"):
                found = word[2:]
    return found


app = typer.Typer(
    cls=LoopxGroup,
    help=HELP,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=True,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(goal_cmds.app, name="goal")
app.add_typer(todo_cmds.app, name="todo")
app.add_typer(quota_cmds.app, name="quota")
app.add_typer(turn_cmds.app, name="turn")
app.add_typer(wait_cmds.gate_app, name="gate")
app.add_typer(wait_cmds.focus_app, name="focus")
app.add_typer(hosts_cmds.app, name="hosts")
app.add_typer(store_cmds.app, name="store")
app.add_typer(notify_cmds.app, name="notify")
app.add_typer(health_cmds.app, name="health")
app.command("doctor")(doctor_cmds.doctor)
app.command("dashboard")(dashboard_cmds.dashboard)
mcp_app = typer.Typer(help="The LoopX MCP server.", no_args_is_help=True)
app.add_typer(mcp_app, name="mcp")
agent_app = typer.Typer(help="Agents: register, list, show, remove.", no_args_is_help=True)
app.add_typer(agent_app, name="agent")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"loopx {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    ctx: typer.Context,
    root: Annotated[
        str | None,
        typer.Option(
            "--root",
            envvar="LOOPX_ROOT",
            help="Project folder holding .loopx/ (default: nearest up from cwd).",
        ),
    ] = None,
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """LoopX: governed long-running agent loops."""
    ctx.obj = {"root": root}


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


@agent_app.command("register")
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


@agent_app.command("list")
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


@agent_app.command("show")
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


@agent_app.command("remove")
def agent_remove(ctx: typer.Context, agent_id: AgentId, fmt: FormatOption = Format.auto) -> None:
    """Unregister an agent that holds no work (exit 5 if it does); its runs and ledger stay."""
    from loopx_core.ops.goals import remove_agent

    with reporting(fmt):
        entry = remove_agent(store(ctx), agent_id)
        emit(dump(entry), fmt, f"Removed agent {entry.agent_id} (its runs and ledger entries stay)")


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
    return Table(
        ["at", "goal", "agent", "subject", "validation", "progress", "summary"],
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
            for r in rows
        ],
        empty="No runs yet: a turn's writeback records one.",
    )


app.command("writeback", help=turn_cmds.alias_help("writeback"))(turn_cmds.writeback)
app.command("workflow-skills")(hosts_cmds.workflow_skills)


@mcp_app.command("serve")
def mcp_serve(ctx: typer.Context) -> None:
    """Serve the LoopX tools over MCP on stdio (should-run, todos, turns, writeback, spend, journal, status)."""
    from loopx_core.mcp import serve

    serve((ctx.find_root().obj or {}).get("root"))


app.command("hook")(hook_cmds.hook)
app.command("heartbeat-prompt")(hook_cmds.heartbeat_prompt)


@app.command("hooks")
def hooks_list(fmt: FormatOption = Format.auto) -> None:
    """List the host events `loopx hook NAME` answers, and the host that declares each."""
    from loopx_core.hosts.manager import events, get_plugin_manager

    with reporting(fmt):
        rows = [{"event": name, "host": h.name} for name, h in events(get_plugin_manager()).items()]
        emit(
            {"hooks": rows},
            fmt,
            Table(
                ["event", "host"], [[r["event"], r["host"]] for r in rows], empty="No host declares a hook."
            ),
        )
