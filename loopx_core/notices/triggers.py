"""The owner notice a should-run packet calls for: at most one per packet, queued once by id.

should-run imports this module only for a packet that needs the owner (user_channel.notify),
a finished goal or a throttled one, so the common tick never loads it.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from loopx_core.clock import parse_time
from loopx_core.errors import LoopxError
from loopx_core.models.records import GoalEntry, GoalState, Notice
from loopx_core.notices import events
from loopx_core.notices.emit import queue_notice


def notice_for(
    packet: dict[str, Any], goal: GoalEntry | None, state: GoalState | None, now: datetime
) -> list[Notice]:
    """The notices this packet raises (usually none)."""
    g, agent = packet["goal_id"], packet.get("agent_id")
    quota = packet["quota"]
    gate = packet.get("capability_gate") or {}
    if quota["state"] == "blocked_health":
        return [events.blocked_health(g, agent, packet["reason"], now)]
    if gate.get("action") == "ask_owner":
        return [events.ask_owner(g, agent, gate["todo_id"], list(gate["missing_capabilities"]), now)]
    if packet["effective_action"] == "await_operator" and state is not None:
        found: list[Notice] = []
        for item in state.gates:  # the blockers decide.scope.operator_blockers names
            if item.status == "open" and item.blocks_agent in (None, agent):
                found.append(events.gate_opened(g, item, now))
        for todo in state.todos:
            blocks = todo.blocks_agent is not None and (agent is None or todo.blocks_agent == agent)
            if todo.kind == "user" and todo.is_open_work and blocks:
                found.append(events.user_todo(g, todo, now))
        return found
    if goal is not None and goal.status == "done":
        return [events.goal_done(g, goal.objective, goal.updated_at, now)]
    if quota["state"] == "throttled" and quota.get("next_eligible_at"):
        until = parse_time(quota["next_eligible_at"])
        if (until - now).total_seconds() >= events.LONG_THROTTLE_MINUTES * 60:
            return [events.long_throttle(g, until, quota["spent_slots"], quota["allowed_slots"], now)]
    return []


def queue_for_packet(
    root: Path, packet: dict[str, Any], goal: GoalEntry | None, state: GoalState | None, now: datetime
) -> int:
    """Queue the packet's notices; how many were new. Never raises (a notice never fails a tick)."""
    try:
        notices = notice_for(packet, goal, state, now)
    except (LoopxError, KeyError, TypeError, ValueError):  # a notice never fails a tick
        return 0
    return sum(queue_notice(root, n) for n in notices)
