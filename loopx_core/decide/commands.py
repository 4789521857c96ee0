"""Next CLI actions: the data-encoded handlers a host runs after reading a packet."""

from __future__ import annotations

import shlex


def command(*parts: str | None, **options: str | int | float | None) -> str:
    """A shell-safe `loopx ...` command line; options with None values are left out."""
    words = ["loopx", *(p for p in parts if p)]
    for name, value in options.items():
        if value is not None:
            words += [f"--{name.replace('_', '-')}", str(value)]
    return shlex.join(words)


def begin_turn(goal_id: str, agent_id: str, todo_id: str | None, instance: str) -> str:
    """Claim the todo (lease) that starts a turn."""
    return command("todo", "claim", goal_id=goal_id, todo_id=todo_id, agent_id=agent_id)


def spend(goal_id: str, agent_id: str, todo_id: str | None, instance: str, replan: str | None = None) -> str:
    """Charge the turn, bound to its settlement identity."""
    return command(
        "quota",
        "spend",
        goal_id=goal_id,
        agent_id=agent_id,
        todo_id=todo_id,
        replan_obligation_id=replan,
        turn_instance_id=instance,
    )


def complete(goal_id: str, agent_id: str, todo_id: str) -> str:
    """Close the todo with its evidence."""
    return command(
        "todo",
        "complete",
        goal_id=goal_id,
        todo_id=todo_id,
        agent_id=agent_id,
        evidence="<evidence>",
    )
