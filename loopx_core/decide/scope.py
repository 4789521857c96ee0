"""Agent scope: which todos an agent may take (claims, bound, excluded, blocks)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loopx_core.models.identity import SettlementIdentity

if TYPE_CHECKING:
    from datetime import datetime

    from loopx_core.models.records import GoalState, Todo


def lease_live(todo: Todo, now: datetime) -> bool:
    """True while the todo's claim lease has not expired."""
    return todo.claimed_by is not None and todo.lease_expires_at is not None and todo.lease_expires_at > now


def scope_refusal(todo: Todo, agent_id: str, now: datetime) -> str | None:
    """Why `agent_id` may not take `todo` (a reason code), or None if it may."""
    if todo.kind != "agent":
        return "user_todo"
    if not todo.is_open_work:
        return f"status_{todo.status}"
    if todo.bound_agent is not None and todo.bound_agent != agent_id:
        return "bound_to_other"
    if agent_id in todo.excluded_agents:
        return "excluded"
    if lease_live(todo, now) and todo.claimed_by != agent_id:
        return "claimed_by_other"
    return None


def ordered(todos: list[Todo]) -> list[Todo]:
    """Todos in run order: lower priority number first, then creation order."""
    return sorted(todos, key=lambda t: (t.priority, t.created_at, t.todo_id))


def in_scope(state: GoalState, agent_id: str, now: datetime) -> list[Todo]:
    """The todos this agent may take, in run order, honouring `blocks_agent`.

    A live lease the agent already holds comes first. An open agent todo that blocks this
    agent narrows its scope to itself: the agent gets no other work while it is open.
    """
    mine = [t for t in state.todos if t.claimed_by == agent_id and lease_live(t, now) and t.is_open_work]
    blockers = [t for t in state.todos if t.kind == "agent" and t.is_open_work and t.blocks_agent == agent_id]
    pool = blockers or state.todos
    takeable = [t for t in pool if scope_refusal(t, agent_id, now) is None]
    held = [t for t in ordered(mine) if t in takeable]
    return held + [t for t in ordered(takeable) if t not in held]


def operator_blockers(state: GoalState, agent_id: str | None) -> list[str]:
    """Ids of open gates and open user todos that stop this agent (any agent if None)."""
    found = [
        g.gate_id
        for g in state.gates
        if g.status == "open" and (g.blocks_agent is None or agent_id is None or g.blocks_agent == agent_id)
    ]
    found += [
        t.todo_id
        for t in state.todos
        if t.kind == "user"
        and t.is_open_work
        and t.blocks_agent is not None
        and (agent_id is None or t.blocks_agent == agent_id)
    ]
    return found


def open_agent_work(state: GoalState) -> list[Todo]:
    """Agent todos still open or claimed, by anyone."""
    return [t for t in state.todos if t.kind == "agent" and t.is_open_work]


def lease_lost(state: GoalState, identity: SettlementIdentity, *, done_is_held: bool = False) -> str | None:
    """Why the turn's agent no longer holds its todo's lease (None: it does; a replan holds none).

    A lease past its expiry that nobody took over is still this agent's. `done_is_held`: a
    done todo counts as held (a closeout retried after its effect).
    """
    todo_id = identity.todo_id
    if todo_id is None:
        return None
    todo = state.todo(todo_id)
    if todo is None:
        return f"todo {todo_id!r} no longer exists"
    if done_is_held and todo.status == "done":
        return None
    if todo.claimed_by != identity.agent_id or todo.status != "claimed":
        holder = f"is held by {todo.claimed_by!r}" if todo.claimed_by else f"is {todo.status}"
        return f"todo {todo_id!r} {holder}: agent {identity.agent_id!r} lost its lease"
    return None
