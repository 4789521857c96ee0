"""Run history across goals: what each turn did, for agents, heartbeats, the owner and the UI."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from loopx_core.ids import check_id

if TYPE_CHECKING:
    from typing import Any

    from loopx_core.store.base import Store

DEFAULT_LIMIT = 20


def history(
    store: Store,
    *,
    goal_id: str | None = None,
    agent_id: str | None = None,
    todo_id: str | None = None,
    since: datetime | None = None,
    limit: int = DEFAULT_LIMIT,
) -> list[dict[str, Any]]:
    """The newest `limit` runs matching the filters, newest first, each with its goal id."""
    from loopx_core.models.domain import check
    from loopx_core.ops.require import require_goal

    limit = check("--limit", "Count", limit)
    for kind, value in (("goal", goal_id), ("agent", agent_id), ("todo", todo_id)):
        if value is not None:
            check_id(kind, value)
    registry = store.read_registry()
    goals = [require_goal(registry, goal_id).goal_id] if goal_id is not None else sorted(registry.goals)
    rows: list[dict[str, Any]] = []
    for goal in goals:
        for entry in store.read_history(goal):
            if (agent_id and entry.agent_id != agent_id) or (todo_id and entry.todo_id != todo_id):
                continue
            if since is not None and datetime.fromisoformat(entry.at.replace("Z", "+00:00")) < since:
                continue
            rows.append({"goal_id": goal, **entry.dump(exclude={"schema_version"})})
    rows.sort(key=lambda r: (r["at"], r["goal_id"], r["run_id"]), reverse=True)
    return rows[:limit]


def last_runs(store: Store, goal_id: str, count: int = 3) -> list[dict[str, Any]]:
    """The goal's last `count` runs, newest first (for status, hooks and heartbeat prompts)."""
    entries = store.read_history(goal_id, last=count)
    return [entry.dump(exclude={"schema_version"}) for entry in reversed(entries)]
