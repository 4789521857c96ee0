"""The run history (`.loopx/goals/<goal>/runs/index.jsonl`): one line per durable writeback."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import StringConstraints

from loopx_core.models.constants import Progress
from loopx_core.schema.common import Id, StrictModel


class RunIndexEntry(StrictModel):
    """One line of `runs/index.jsonl`: the compact history of a run, for agents, heartbeats and UI."""

    schema_version: Literal[1]
    run_id: str
    at: str
    agent_id: Id
    todo_id: Id | None = None
    turn_key: str
    validation: Literal["passed", "failed"]
    summary: str
    progress: Progress = "todo_worked"
    """What the turn advanced: a todo worked on, todos added or re-scoped by a replan, or none."""
    progress_detail: str = ""
    trace_id: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{32}$")] | None = None
    """The turn's trace id, when it was traced (docs/observability.md)."""
