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
    """Start the turn: claim the todo (or take the replan obligation) and open its journal."""
    if todo_id is None:
        return command(
            "turn", "begin", "--replan", goal_id=goal_id, agent_id=agent_id, turn_instance_id=instance
        )
    return command(
        "turn", "begin", goal_id=goal_id, agent_id=agent_id, todo_id=todo_id, turn_instance_id=instance
    )


def writeback(goal_id: str, agent_id: str, turn_key: str) -> str:
    """Record validation evidence and the durable run record."""
    return command(
        "writeback",
        goal_id=goal_id,
        agent_id=agent_id,
        turn_key=turn_key,
        summary="<summary>",
        validation_status="passed",
        evidence="<evidence>",
    )


def spend(goal_id: str, agent_id: str, turn_key: str) -> str:
    """Charge the turn, bound to its identity."""
    return command("quota", "spend", goal_id=goal_id, agent_id=agent_id, turn_key=turn_key)


def complete(goal_id: str, agent_id: str, todo_id: str) -> str:
    """Close the todo with its evidence (ordinary todo lifecycle)."""
    return command(
        "todo", "complete", goal_id=goal_id, todo_id=todo_id, agent_id=agent_id, evidence="<evidence>"
    )
