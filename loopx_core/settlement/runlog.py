"""The run log: one JSON and one Markdown record per durable writeback, and the history index."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loopx_core.clock import iso
from loopx_core.models.records import RunIndexEntry

if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any

    from loopx_core.store.base import Store


def run_id_for(effect_id: str) -> str:
    """The run id of a turn: one writeback per turn, so retries rewrite the same record."""
    return f"run-{effect_id[:16]}"


def write_run(store: Store, record: dict[str, Any], at: datetime, *, trace_id: str | None = None) -> None:
    """Store the run record (JSON and Markdown) and index it in the history once (goal lock held);
    `trace_id`: the turn's trace, when it was traced."""
    entry = RunIndexEntry(
        schema_version=1,
        run_id=record["run_id"],
        at=iso(at),
        agent_id=record["agent_id"],
        todo_id=record.get("todo_id"),
        turn_key=record["turn_key"],
        validation="passed" if record["validation"]["passed"] else "failed",
        summary=record["summary"][:160],
        progress=record["progress"]["kind"],
        progress_detail=record["progress"]["detail"][:160],
        trace_id=trace_id,
    )
    store.record_run(record["goal_id"], record, run_markdown(record), entry)


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
