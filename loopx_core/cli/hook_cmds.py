"""`loopx hook NAME`, `loopx heartbeat-prompt` and `loopx hooks`: the entry points hosts call.

The runners live in cli/hooks.py (no typer), which the fast entry calls too.
"""

from __future__ import annotations

from typing import Annotated

import typer

from loopx_core.cli.common import option
from loopx_core.cli.declare import FORMAT as FORMAT_OPTION
from loopx_core.cli.declare import HEARTBEAT_PROMPT, HEARTBEAT_SURFACE, HOOK, LOOPX_COMMAND
from loopx_core.cli.formats import Format
from loopx_core.cli.hooks import run_heartbeat_prompt, run_hook

app = typer.Typer(add_completion=False)
_HOOK_GOAL, _HOOK_AGENT = HOOK.options
_GOAL, _AGENT = HEARTBEAT_PROMPT.options[:2]


@app.command("hook")
def hook(
    ctx: typer.Context,
    name: Annotated[
        str, typer.Argument(help="The host event, e.g. claude-stop (see `loopx hooks`).", show_default=False)
    ],
    goal_id: Annotated[str | None, option(_HOOK_GOAL)] = None,
    agent_id: Annotated[str | None, option(_HOOK_AGENT)] = None,
) -> None:
    """Answer a host's event hook: reads the event JSON on stdin, prints the host's answer.

    Exit 0 with the answer (an empty answer lets the host carry on); 1 on any error.
    """
    root = (ctx.find_root().obj or {}).get("root")
    raise SystemExit(run_hook(root=root, name=name, goal_id=goal_id, agent_id=agent_id))


@app.command("heartbeat-prompt")
def heartbeat_prompt(
    goal_id: Annotated[str, option(_GOAL, show_default=False)],
    agent_id: Annotated[str, option(_AGENT, show_default=False)],
    surface: Annotated[str | None, option(HEARTBEAT_SURFACE)] = None,
    loopx_command: Annotated[str, option(LOOPX_COMMAND)] = "loopx",
) -> None:
    """Print the prompt a host's heartbeat automation runs on every tick."""
    raise SystemExit(
        run_heartbeat_prompt(
            root=None, goal_id=goal_id, agent_id=agent_id, surface=surface, loopx_command=loopx_command
        )
    )


@app.command("hooks")
def hooks_list(fmt: Annotated[Format, option(FORMAT_OPTION)] = Format.auto) -> None:
    """List the host events `loopx hook NAME` answers, and the host that declares each."""
    from loopx_core.cli.output import Table, emit, reporting
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
