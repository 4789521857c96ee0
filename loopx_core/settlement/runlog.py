"""The run log: one JSON and one Markdown record per durable writeback, and the history index."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Literal

from loopx_core.clock import iso
from loopx_core.models.common import Id, StrictModel
from loopx_core.store import ledger
from loopx_core.store.atomic import atomic_write_bytes
from loopx_core.store.files import FileStore


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


def run_id_for(effect_id: str) -> str:
    """The run id of a turn: one writeback per turn, so retries rewrite the same record."""
    return f"run-{effect_id[:16]}"


def write_run(store: FileStore, record: dict[str, Any], at: datetime) -> None:
    """Write `runs/<run>.json` and `.md` atomically, then index the run once (goal lock held)."""

    goal_id, run_id = record["goal_id"], record["run_id"]
    folder = store.runs_dir(goal_id)
    indexed = store.run_indexed(goal_id, run_id)  # read before writing: a damaged history writes nothing
    atomic_write_bytes(
        folder / f"{run_id}.json", (json.dumps(record, indent=2, ensure_ascii=False) + "\n").encode()
    )
    atomic_write_bytes(folder / f"{run_id}.md", run_markdown(record).encode())
    if indexed:
        return  # a retry after a crash between the record and its journal receipt
    entry = RunIndexEntry(
        schema_version=1,
        run_id=run_id,
        at=iso(at),
        agent_id=record["agent_id"],
        todo_id=record.get("todo_id"),
        turn_key=record["turn_key"],
        validation="passed" if record["validation"]["passed"] else "failed",
        summary=record["summary"][:160],
    )
    line = json.dumps(entry.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":")).encode()
    ledger.append_line(folder / "index.jsonl", line)
    store.index_runs(goal_id)


def run_markdown(record: dict[str, Any]) -> str:
    """A run record for people."""
    subject = (
        f"todo {record['todo_id']}"
        if record.get("todo_id")
        else f"replan {record.get('replan_obligation_id')}"
    )
    lines = [
        f"# {record['run_id']}: {subject}",
        "",
        f"- goal: {record['goal_id']}; agent: {record['agent_id']}",
        f"- turn: {record['turn_key']}",
        f"- written: {record['written_at']}",
        f"- validation: {'passed' if record['validation']['passed'] else 'failed'}",
        "",
        "## Summary",
        "",
        record["summary"],
    ]
    if record.get("evidence"):
        lines += ["", "## Evidence", ""] + [f"- {e}" for e in record["evidence"]]
    if record.get("changed_files"):
        lines += ["", "## Changed files", ""] + [f"- `{f}`" for f in record["changed_files"]]
    return "\n".join(lines) + "\n"
