"""Scenarios the benchmarks and the cost tests share, written straight to files (fast to build).

`many_goals` writes N goals of T todos each (one registry, N state files) without going
through the locked, fsynced writes: the files are the ones those writes would produce.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from loopx_core.models import SCHEMA_VERSION, GoalEntry, GoalState, Registry, Todo
from loopx_core.models.registry import AgentEntry
from loopx_core.store.files import FileStore


def many_goals(root: Path, goals: int, todos_each: int, now: datetime) -> FileStore:
    """A project of `goals` goals (`g0`...), `todos_each` open todos each, and agent `builder`."""
    store = FileStore(root)
    store.state_dir.mkdir(parents=True, exist_ok=True)
    registry = Registry(schema_version=SCHEMA_VERSION)
    registry.agents["builder"] = AgentEntry(agent_id="builder", registered_at=now, updated_at=now)
    for n in range(goals):
        goal_id = f"g{n}"
        registry.goals[goal_id] = GoalEntry(
            goal_id=goal_id, objective=f"Goal {n}", created_at=now, updated_at=now
        )
        state = GoalState(
            schema_version=SCHEMA_VERSION,
            goal_id=goal_id,
            next_todo_number=todos_each + 1,
            todos=[
                Todo(todo_id=f"t{i + 1}", title=f"Todo {i + 1}", created_at=now, updated_at=now)
                for i in range(todos_each)
            ],
        )
        store.goal_dir(goal_id).mkdir(parents=True)
        store.goal_path(goal_id).write_bytes(state.model_dump_json(indent=2).encode() + b"\n")
    store.registry_path.write_bytes(registry.model_dump_json(indent=2).encode() + b"\n")
    return store
