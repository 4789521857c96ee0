"""Scenarios the benchmarks and the cost tests share, written straight to files (fast to build).

`many_goals` writes N goals of T todos each (one registry, N state files) without going
through the locked, fsynced writes: the files are the ones those writes would produce.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from loopx_core.models import codec
from loopx_core.models.constants import SCHEMA_VERSION
from loopx_core.models.records import AgentEntry, GoalEntry, GoalState, Registry, Todo
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
        store.goal_path(goal_id).write_bytes(codec.document(state))
    store.registry_path.write_bytes(codec.document(registry))
    return store


def big_goal(
    root: Path, now: datetime, todos_open: int = 200, spends: int = 2_000, hours: float = 48
) -> FileStore:
    """The issue's big scenario: goal `parser` with `todos_open` todos and `spends` spends.

    The spends lie evenly over the past `hours` (48: about half fall in the 24-hour window and
    the goal stays eligible; 2,500 for 100,000 spends: 1.5 minutes apart, as should-run's
    flat-cost figure has them, about 960 in the window); agents `builder` (python, shell) and `reviewer` (review).
    """
    from datetime import timedelta

    from loopx_core.models.records import LedgerEvent
    from loopx_core.ops import goals

    store = FileStore(root)
    store.init()
    goals.add_goal(store, "parser", "Ship a tested parser", now)
    goals.register_agent(store, "builder", ["python", "shell"], now)
    goals.register_agent(store, "reviewer", ["review"], now)

    def grow(state: GoalState) -> None:
        for n in range(todos_open):
            caps = ["python"] if n % 3 else ["deploy"]
            state.todos.append(
                Todo(
                    todo_id=f"t{n + 1}",
                    title=f"Task {n + 1}",
                    priority=n % 10,
                    required_capabilities=caps,
                    created_at=now,
                    updated_at=now,
                )
            )
        state.next_todo_number = todos_open + 1

    store.update_goal("parser", grow)
    step = timedelta(hours=hours) / max(spends, 1)
    lines = [
        codec.line(
            LedgerEvent(
                schema_version=SCHEMA_VERSION,
                event_id=f"ev-{seq}",
                seq=seq,
                kind="spend",
                at=now - timedelta(hours=hours) + step * seq,
                goal_id="parser",
                agent_id="builder" if seq % 2 else "reviewer",
                todo_id=f"t{seq % todos_open + 1}",
                turn_instance_id=f"ti-{seq:016x}",
                slots=1,
                duration_seconds=42.0,
            ),
            exclude_none=True,
        ).decode()
        for seq in range(1, spends + 1)
    ]
    store.ledger_path("parser").write_text("\n".join(lines) + "\n")
    return store
