"""The typer application: `loopx`, its options, and its commands, each loaded when it is asked for.

`COMMANDS` lists every command once: where it lives, its section in `loopx --help` and what
it is for. `loopx X` imports only X's module (cli/group.py), and the top-level help is drawn
from this table without importing any.
"""

from __future__ import annotations

from typing import Annotated

import typer

from loopx_core import __version__
from loopx_core.cli.declare import ROOT
from loopx_core.cli.group import Entry, LoopxGroup

HELP = """LoopX keeps the state of long-running agent loops: goals, todos, gates, quota, receipts.

Start with `loopx init`, add a goal and todos, register agents, then let each heartbeat
ask `loopx quota should-run --goal-id G --agent-id A` what to do.

Exit codes: 0 ok, 1 internal error, 2 usage, 3 not found, 4 state invalid, 5 conflict,
6 lock timeout, 7 refused, 8 unsupported schema, 9 drift; settlement refusals 10-19;
130 interrupted (see docs/cli.md).
"""

COMMANDS: dict[str, Entry] = {
    "init": Entry("project_cmds:init", "Start", "Create the project's state (in .loopx/ or a team store)."),
    "start": Entry("project_cmds:start", "Start", "Turn a task into a todo and get its first should-run."),
    "goal": Entry("goal_cmds:app", "Start", "Goals: their objective, quota policy, stop and resume."),
    "todo": Entry("todo_cmds:app", "Start", "Todos: add, list, claim, complete, block."),
    "agent": Entry("agent_cmds:app", "Start", "Agents: register them and their capabilities."),
    "quota": Entry("quota_cmds:app", "Heartbeat", "Ask whether to run (should-run); charge and void slots."),
    "turn": Entry("turn_cmds:app", "Heartbeat", "Settle a turn once: begin, writeback, spend, closeout."),
    "writeback": Entry(
        "turn_cmds:writeback_alias", "Heartbeat", "Record a turn's result (alias of `turn writeback`)."
    ),
    "hook": Entry("hook_cmds:hook", "Heartbeat", "Answer a host's event hook (hosts run it)."),
    "heartbeat-prompt": Entry(
        "hook_cmds:heartbeat_prompt", "Heartbeat", "Print the prompt a host's heartbeat runs."
    ),
    "gate": Entry("wait_cmds:gate_app", "Owner", "Operator gates: stop an agent until the owner decides."),
    "focus": Entry("wait_cmds:focus_app", "Owner", "Focus waits: pause a goal until evidence arrives."),
    "status": Entry("project_cmds:status", "Owner", "Every goal's state, most urgent first."),
    "history": Entry("project_cmds:history", "Owner", "What each turn did, newest first."),
    "health": Entry("health_cmds:app", "Owner", "Health findings and each agent's liveness."),
    "notify": Entry("notify_cmds:app", "Owner", "Where owner notices go, and their delivery."),
    "doctor": Entry("doctor_cmds:doctor", "Owner", "Check state, installation and liveness; repair."),
    "dashboard": Entry("dashboard_cmds:dashboard", "Owner", "Serve the local web dashboard."),
    "workflow-skills": Entry(
        "hosts_cmds:workflow_skills", "Hosts", "Install, check or remove LoopX in a host."
    ),
    "hosts": Entry("hosts_cmds:app", "Hosts", "The host plugins: list them, scaffold a new one."),
    "hooks": Entry("hook_cmds:hooks_list", "Hosts", "The host events `loopx hook` answers."),
    "mcp": Entry("mcp_cmds:app", "Hosts", "The LoopX MCP server (`loopx mcp serve`)."),
    "store": Entry("store_cmds:app", "Team", "Where the state lives; move it between stores."),
}


class Loopx(LoopxGroup):
    """The `loopx` command."""

    lazy = COMMANDS


app = typer.Typer(
    cls=Loopx,
    help=HELP,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=True,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"loopx {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    ctx: typer.Context,
    root: Annotated[str | None, typer.Option(*ROOT.names, envvar="LOOPX_ROOT", help=ROOT.help)] = None,
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """LoopX: governed long-running agent loops."""
    ctx.obj = {"root": root}
