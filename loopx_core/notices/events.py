"""The notices LoopX sends, one builder per event, each with its stable id (docs/notices.md).

| event | raised by | id made of |
|---|---|---|
| gate_opened | `gate open`, a should-run packet at an owner gate | goal, gate, opened at |
| no_progress | the no-progress escalation (a `no_progress` gate) | goal, gate, opened at |
| ask_owner | a should-run packet whose capability gate asks the owner | goal, todo, missing capabilities |
| blocked_health | a should-run packet in `blocked_health` | goal, reason |
| stalled | `loopx doctor` (liveness) | agent, last heartbeat |
| goal_done | a should-run packet of a finished goal | goal, finished at |
| long_throttle | a should-run packet throttled for `LONG_THROTTLE_MINUTES` or more | goal, eligible again at |
"""

from __future__ import annotations

import os
from datetime import datetime

from loopx_core.clock import iso
from loopx_core.escapes import clipped
from loopx_core.models.records import Gate, Notice, Todo
from loopx_core.notices.emit import notice_id

LONG_THROTTLE_MINUTES = 240
"""A throttle that keeps a goal waiting this long (or longer) is worth telling the owner."""


def _title(goal_id: str | None, what: str) -> str:
    return f"LoopX: {goal_id}: {what}" if goal_id else f"LoopX: {what}"


def gate_opened(goal_id: str, gate: Gate, at: datetime) -> Notice:
    """An operator gate opened (`no_progress` when LoopX opened it for a loop that advanced nothing)."""
    kind = "no_progress" if gate.kind == "no_progress" else "gate_opened"
    what = "no progress, waiting for you" if kind == "no_progress" else f"gate {gate.gate_id} opened"
    who = f" (blocks {gate.blocks_agent})" if gate.blocks_agent else ""
    return Notice(
        notice_id=notice_id(kind, goal_id, gate.gate_id, iso(gate.opened_at)),
        kind=kind,
        goal_id=goal_id,
        agent_id=gate.blocks_agent,
        title=_title(goal_id, what),
        body=f"{gate.title}{who}. Resolve it: loopx gate resolve --goal-id {goal_id} --gate-id {gate.gate_id}",
        at=at,
        subject={"gate_id": gate.gate_id, "gate_kind": gate.kind},
    )


def user_todo(goal_id: str, todo: Todo, at: datetime) -> Notice:
    """A user todo stops an agent (an owner gate of its own)."""
    return Notice(
        notice_id=notice_id("gate_opened", goal_id, "todo", todo.todo_id, iso(todo.created_at)),
        kind="gate_opened",
        goal_id=goal_id,
        agent_id=todo.blocks_agent,
        title=_title(goal_id, f"todo {todo.todo_id} waits for you"),
        body=f"{todo.title} (blocks {todo.blocks_agent}). Done: loopx todo complete --goal-id {goal_id} "
        f"--todo-id {todo.todo_id}",
        at=at,
        subject={"todo_id": todo.todo_id},
    )


def ask_owner(goal_id: str, agent_id: str | None, todo_id: str, missing: list[str], at: datetime) -> Notice:
    """No registered agent has what a todo needs: the owner grants it or re-scopes the todo."""
    need = ", ".join(sorted(missing))
    return Notice(
        notice_id=notice_id("ask_owner", goal_id, todo_id, need),
        kind="ask_owner",
        goal_id=goal_id,
        agent_id=agent_id,
        title=_title(goal_id, f"todo {todo_id} needs {need}"),
        body=f"No agent has {need}: grant it to an agent (loopx agent register ... --capability) "
        f"or re-scope todo {todo_id}.",
        at=at,
        subject={"todo_id": todo_id, "missing_capabilities": need},
    )


def blocked_health(goal_id: str, agent_id: str | None, reason: str, at: datetime) -> Notice:
    """The goal's state is unreadable or a high health finding blocks it."""
    return Notice(
        notice_id=notice_id("blocked_health", goal_id, reason[:300]),
        kind="blocked_health",
        goal_id=goal_id,
        agent_id=agent_id,
        title=_title(goal_id, "blocked: state needs repair"),
        body=f"{clipped(reason, 300)}. Mend it: loopx doctor --repair",
        at=at,
        subject={"reason": reason[:300]},
    )


def stalled(agent_id: str, last_seen: datetime, cadence_minutes: float, at: datetime) -> Notice:
    """An agent's heartbeat missed two cadences."""
    return Notice(
        notice_id=notice_id("stalled", agent_id, iso(last_seen)),
        kind="stalled",
        agent_id=agent_id,
        title=_title(None, f"agent {agent_id} stalled"),
        body=f"No heartbeat from {agent_id} since {iso(last_seen)} (cadence {cadence_minutes:g} min): "
        "check its host's heartbeat or scheduler.",
        at=at,
        subject={"last_seen": iso(last_seen), "cadence_minutes": f"{cadence_minutes:g}"},
    )


def goal_done(goal_id: str, objective: str, done_at: datetime, at: datetime) -> Notice:
    """The goal reached its terminal closeout."""
    return Notice(
        notice_id=notice_id("goal_done", goal_id, iso(done_at)),
        kind="goal_done",
        goal_id=goal_id,
        title=_title(goal_id, "done"),
        body=f"Goal done: {clipped(objective, 200)}",
        at=at,
        subject={"done_at": iso(done_at)},
    )


def long_throttle(goal_id: str, until: datetime, spent: int, allowed: int, at: datetime) -> Notice:
    """The goal's compute quota is spent and stays so for a long while."""
    return Notice(
        notice_id=notice_id("long_throttle", goal_id, iso(until)),
        kind="long_throttle",
        goal_id=goal_id,
        title=_title(goal_id, f"throttled until {iso(until)}"),
        body=f"{spent}/{allowed} slots spent: the goal waits until {iso(until)}. Raise its compute "
        "(loopx goal configure) if it should not.",
        at=at,
        subject={"until": iso(until)},
    )


def test_notice(at: datetime) -> Notice:
    """What `loopx notify test` sends (a new id every time, so a file sink never skips it)."""
    return Notice(
        notice_id=notice_id("test", iso(at), os.urandom(8).hex()),
        kind="test",
        title="LoopX: test notice",
        body="This sink receives LoopX's notices.",
        at=at,
    )
