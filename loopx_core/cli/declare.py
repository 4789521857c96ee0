"""The options of the commands a host runs on every tick, declared once (no typer here).

`quota should-run`, `hook NAME` and `heartbeat-prompt` are typer commands like every other;
their options are these declarations, which the typer commands take (`cli.common.option`) and
the fast entry (`cli.fast`) hands to `argparse`, so a host's tick need not load typer. Whatever
argparse does not take as these commands (help, an unknown or malformed option) goes to typer,
which answers it. tests/test_cli_declarations.py holds each typer command to its declaration.
"""

from __future__ import annotations

from typing import NamedTuple

FORMATS = ("auto", "human", "json", "markdown")
"""The `--format` values (typer's choices are `cli.formats.Format`, the same strings)."""
FORMAT_HELP = "Output: auto (human on a terminal, JSON when piped), human, json or markdown."


class Opt(NamedTuple):
    """One option: its spellings, the parameter it fills, its help text."""

    names: tuple[str, ...]
    dest: str
    help: str
    many: bool = False
    """It may be given more than once (a list)."""
    choices: tuple[str, ...] = ()
    default: str | None = None


class Fast(NamedTuple):
    """A command the fast entry runs: its words after `loopx`, its options, what runs it."""

    path: tuple[str, ...]
    options: tuple[Opt, ...]
    required: tuple[str, ...]
    """The options typer requires (by `dest`)."""
    runner: str
    """`module:function` called with the parsed values (and `root`) as keywords."""
    argument: str | None = None
    """A positional argument's `dest` (`hook NAME`)."""


ROOT = Opt(("--root",), "root", "Project folder holding .loopx/ (default: nearest up from cwd).")
GOAL = Opt(("--goal-id", "-g"), "goal_id", "Goal id (a-z 0-9 . _ -).")
AGENT = Opt(("--agent-id", "-a"), "agent_id", "Agent id (a-z 0-9 . _ -).")
CAPABILITY = Opt(
    ("--available-capability", "-c"),
    "available_capability",
    "A capability the host offers now (repeat).",
    many=True,
)
SURFACE = Opt(("--surface",), "surface", "Host surface asking, e.g. codex-app.")
CURRENT_RRULE = Opt(
    ("--current-rrule",),
    "current_rrule",
    "The heartbeat's rrule as the host has it now (says if it must change).",
)
FORMAT = Opt(("--format", "-f"), "fmt", FORMAT_HELP, choices=FORMATS, default="auto")
HOOK_GOAL = Opt(("--goal-id", "-g"), "goal_id", "Goal (else LOOPX_GOAL_ID).")
HOOK_AGENT = Opt(("--agent-id", "-a"), "agent_id", "Agent (else LOOPX_AGENT_ID).")
HEARTBEAT_SURFACE = Opt(
    ("--surface",), "surface", "Host whose heartbeat it is (default: the one that has one)."
)
LOOPX_COMMAND = Opt(("--loopx-command",), "loopx_command", "How the host runs LoopX.", default="loopx")

SHOULD_RUN = Fast(
    ("quota", "should-run"),
    (GOAL, AGENT, CAPABILITY, SURFACE, CURRENT_RRULE, FORMAT),
    ("goal_id", "agent_id"),
    "loopx_core.cli.should_run:run_should_run",
)
HOOK = Fast(("hook",), (HOOK_GOAL, HOOK_AGENT), (), "loopx_core.cli.hooks:run_hook", argument="name")
HEARTBEAT_PROMPT = Fast(
    ("heartbeat-prompt",),
    (GOAL, AGENT, HEARTBEAT_SURFACE, LOOPX_COMMAND),
    ("goal_id", "agent_id"),
    "loopx_core.cli.hooks:run_heartbeat_prompt",
)
FAST = (SHOULD_RUN, HOOK, HEARTBEAT_PROMPT)
"""Every command the fast entry may run."""
