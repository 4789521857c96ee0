"""`loopx status`: every goal's quota state, sorted by who must act first."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from loopx_core.clock import iso
from loopx_core.decide.assess import assess
from loopx_core.decide.packet import load_inputs
from loopx_core.errors import StateInvalidError
from loopx_core.ops.history import last_runs
from loopx_core.quota import ATTENTION_ORDER
from loopx_core.store.base import Store

WHO_ACTS = {
    "blocked_health": "owner",
    "operator_gate": "owner",
    "focus_wait": "external",
    "eligible": "agent",
    "waiting": "nobody",
    "throttled": "nobody",
    "paused": "owner",
}


def attention(store: Store, now: datetime) -> list[dict[str, Any]]:
    """One row per goal, in attention order (blocked_health first, paused last)."""
    registry = store.read_registry()
    rows = []
    for goal_id, goal in registry.goals.items():
        inputs = load_inputs(store, goal_id, None, now, registry=registry)
        a = assess(inputs)
        state = inputs.state
        todos = state.todos if state else []
        rows.append(
            {
                "goal_id": goal_id,
                "state": a.state,
                "who_acts": WHO_ACTS[a.state],
                "reason": a.reason,
                "objective": goal.objective,
                "todos_open": sum(1 for t in todos if t.is_open_work),
                "todos_done": sum(1 for t in todos if t.status == "done"),
                "spent_slots": inputs.usage.spent_slots if inputs.usage else None,
                "allowed_slots": inputs.usage.allowed_slots if inputs.usage else goal.quota.allowed_slots,
                "next_eligible_at": iso(a.next_eligible_at) if a.next_eligible_at else None,
                "last_run": _last_run(store, goal_id) if state is not None else None,
            }
        )
        if goal.status == "done":  # finished, not paused by its owner
            rows[-1].update(state="done", who_acts="nobody", reason="goal done (terminal closeout)")
    order = (*ATTENTION_ORDER, "done")
    rows.sort(key=lambda r: (order.index(r["state"]), r["goal_id"]))
    return rows


def _last_run(store: Store, goal_id: str) -> dict[str, Any] | None:
    """The goal's newest run (at, agent, summary, progress), or None; a damaged history shows as None."""
    try:
        runs = last_runs(store, goal_id, 1)
    except StateInvalidError:
        return None
    if not runs:
        return None
    run = runs[0]
    return {k: run[k] for k in ("at", "agent_id", "todo_id", "progress", "summary")}
