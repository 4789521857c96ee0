"""`loopx start`: one step from a task in a host's chat to a governed loop.

Creates what is missing (the state root, the goal, the agent), adds the task as a todo, and
leaves the first should-run to the caller, so `/loopx <task>` in any host is one command.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from loopx_core.errors import UsageError
from loopx_core.ids import check_id
from loopx_core.models.records import Todo
from loopx_core.ops import goals, todos
from loopx_core.store.base import Store


@dataclass(frozen=True)
class Started:
    """What `start` found or created."""

    goal_id: str
    agent_id: str
    todo: Todo
    created_goal: bool
    registered_agent: bool


def goal_id_for(title: str) -> str:
    """A goal id from a task's words: lower case, dashes, at most 40 characters."""
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:40].strip("-")
    return slug or "goal"


def start(
    store: Store,
    title: str,
    now: datetime,
    *,
    agent_id: str,
    goal_id: str | None = None,
    objective: str | None = None,
    host: str | None = None,
) -> Started:
    """Add `title` as a todo of `goal_id` (or of the only active goal, or of a new goal)."""
    if not title.strip():
        raise UsageError("a task needs a non-empty --title")
    check_id("agent", agent_id)
    if goal_id is not None:
        check_id("goal", goal_id)
    store.init()  # no-op when the project already has state
    registry = store.read_registry()
    chosen, created = goal_id, False
    if chosen is None:
        active = sorted(g for g, e in registry.goals.items() if e.status == "active")
        if len(active) > 1:
            raise UsageError(f"several active goals ({', '.join(active)}): pass --goal-id")
        chosen = active[0] if active else goal_id_for(title)
    if chosen not in registry.goals:
        goals.add_goal(store, chosen, (objective or title).strip(), now)
        created = True
    registered = agent_id not in registry.agents
    if registered:
        goals.register_agent(store, agent_id, [], now, host=host)
    todo = todos.add_todo(store, chosen, title, now)
    return Started(chosen, agent_id, todo, created, registered)
