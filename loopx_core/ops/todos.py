"""Todos: add, list, and the lease lifecycle (claim, release, complete, block)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loopx_core.decide import scope
from loopx_core.errors import (
    ConflictError,
    LoopxError,
    NotFoundError,
    RefusedError,
    SettlementError,
    UsageError,
)
from loopx_core.ids import check_capabilities, check_id
from loopx_core.models.domain import check, check_optional
from loopx_core.models.identity import SettlementIdentity
from loopx_core.models.records import Todo
from loopx_core.ops.lease import DEFAULT_LEASE_MINUTES, lease_todo
from loopx_core.ops.require import require_goal, require_worker

if TYPE_CHECKING:
    from datetime import datetime
    from typing import Literal

    from loopx_core.models.records import GoalState
    from loopx_core.store.base import Store


def require_todo(state: GoalState, todo_id: str) -> Todo:
    """The todo, or a `NotFoundError`."""
    check_id("todo", todo_id)
    todo = state.todo(todo_id)
    if todo is None:
        raise NotFoundError(f"todo {todo_id!r} not found in goal {state.goal_id!r}")
    return todo


def add_todo(
    store: Store,
    goal_id: str,
    title: str,
    now: datetime,
    *,
    todo_id: str | None = None,
    kind: Literal["agent", "user"] = "agent",
    priority: int = 2,
    required_capabilities: list[str] | None = None,
    bound_agent: str | None = None,
    excluded_agents: list[str] | None = None,
    blocks_agent: str | None = None,
) -> Todo:
    """Add a todo; without `todo_id` the next free `t<N>` is used."""
    registry = store.read_registry()
    require_goal(registry, goal_id)
    if not title.strip():
        raise UsageError("a todo needs a non-empty --title")
    priority = check("--priority", "Priority", priority)
    for kind_name, agent in [("bound", bound_agent), ("blocks", blocks_agent)] + [
        ("excluded", a) for a in excluded_agents or []
    ]:
        if agent is not None:
            check_id(f"{kind_name} agent", agent)
    if todo_id is not None:
        check_id("todo", todo_id)
    capabilities = check_capabilities(required_capabilities or [])

    def change(state: GoalState) -> Todo:
        chosen = todo_id
        if chosen is None:
            while state.todo(f"t{state.next_todo_number}") is not None:
                state.next_todo_number += 1
            chosen = f"t{state.next_todo_number}"
            state.next_todo_number += 1
        elif state.todo(chosen) is not None:
            raise ConflictError(f"todo {chosen!r} already exists in goal {goal_id!r}")
        todo = Todo(
            todo_id=chosen,
            title=title.strip(),
            kind=kind,
            priority=priority,
            required_capabilities=capabilities,
            bound_agent=bound_agent,
            excluded_agents=sorted(set(excluded_agents or [])),
            blocks_agent=blocks_agent,
            created_at=now,
            updated_at=now,
        )
        state.todos.append(todo)
        return todo

    return store.update_goal(goal_id, change)


def update_todo(
    store: Store,
    goal_id: str,
    todo_id: str,
    now: datetime,
    *,
    title: str | None = None,
    priority: int | None = None,
    required_capabilities: list[str] | None = None,
    bound_agent: str | None = None,
    excluded_agents: list[str] | None = None,
    blocks_agent: str | None = None,
) -> Todo:
    """Re-scope a todo: change what is given (an empty string clears an agent field).

    A blocked or deferred todo re-scoped is open again; a re-scoped todo is progress for a
    replan turn (`rescoped_at`).
    """
    check_id("goal", goal_id)
    check_id("todo", todo_id)
    require_goal(store.read_registry(), goal_id)
    if title is not None and not title.strip():
        raise UsageError("--title must not be empty")
    priority = check_optional("--priority", "Priority", priority)
    if excluded_agents is not None:  # an empty word clears the list, as it clears one agent
        excluded_agents = [a for a in excluded_agents if a]
    agents = {"bound": bound_agent, "blocks": blocks_agent}
    for kind_name, agent in [*agents.items(), *(("excluded", a) for a in excluded_agents or [])]:
        if agent:
            check_id(f"{kind_name} agent", agent)
    if all(
        v is None
        for v in (title, priority, required_capabilities, bound_agent, excluded_agents, blocks_agent)
    ):
        raise UsageError("nothing to change: give --title, --priority, --capability or an agent option")

    def change(state: GoalState) -> Todo:
        todo = require_todo(state, todo_id)
        if todo.status == "done":
            raise RefusedError(f"todo {todo_id!r} is done: add a new todo instead", code="todo_done")
        if title is not None:
            todo.title = title.strip()
        if priority is not None:
            todo.priority = priority
        if required_capabilities is not None:
            todo.required_capabilities = check_capabilities(required_capabilities)
        if bound_agent is not None:
            todo.bound_agent = bound_agent or None
        if blocks_agent is not None:
            todo.blocks_agent = blocks_agent or None
        if excluded_agents is not None:
            todo.excluded_agents = sorted(set(excluded_agents))
        if todo.status in ("blocked", "deferred"):
            todo.status, todo.blocked_reason = "open", None
        todo.rescoped_at = todo.updated_at = now
        return todo

    return store.update_goal(goal_id, change)


def list_todos(store: Store, goal_id: str, *, status: str | None = None) -> list[Todo]:
    """The goal's todos in run order, optionally only those of one status."""
    state = store.read_goal(goal_id)
    todos = scope.ordered(state.todos)
    return [t for t in todos if status is None or t.status == status]


def claim_todo(
    store: Store,
    goal_id: str,
    todo_id: str,
    agent_id: str,
    now: datetime,
    *,
    lease_minutes: float = DEFAULT_LEASE_MINUTES,
) -> Todo:
    """Take (or renew) the todo's lease through the task-lease adapter of the settlement algebra.

    Exactly one of several concurrent claimants wins; the others get `ConflictError` (exit 5);
    an agent that may not take it gets `RefusedError` (exit 7).
    """

    check_id("goal", goal_id)
    check_id("todo", todo_id)
    check_id("agent", agent_id)
    require_worker(store.read_registry(), agent_id)
    lease_minutes = check("--lease-minutes", "Minutes", lease_minutes)
    identity = SettlementIdentity(goal_id, agent_id, todo_id, turn_instance_id=f"lease-{now.timestamp():.0f}")
    result = lease_todo(store, identity, now, lease_minutes=lease_minutes)
    if result.failure is not None:
        raise RefusedError(result.failure.message, code=str(result.failure.kind))
    todo = store.read_goal(goal_id).todo(todo_id)
    assert todo is not None
    return todo


def release_todo(store: Store, goal_id: str, todo_id: str, agent_id: str, now: datetime) -> Todo:
    """Give the lease back; only its holder may."""
    check_id("goal", goal_id)
    check_id("todo", todo_id)
    check_id("agent", agent_id)

    def change(state: GoalState) -> Todo:
        todo = require_todo(state, todo_id)
        if todo.claimed_by != agent_id:
            raise ConflictError(f"todo {todo_id!r} is not claimed by {agent_id!r}")
        todo.end_claim("open", now)
        _end_settled_turn(store, state, goal_id, agent_id, todo_id)
        return todo

    return store.update_goal(goal_id, change)


def complete_todo(
    store: Store,
    goal_id: str,
    todo_id: str,
    now: datetime,
    *,
    agent_id: str | None = None,
    evidence: list[str] | None = None,
) -> Todo:
    """Mark a todo done with its evidence; an agent todo only by its lease holder."""
    check_id("goal", goal_id)
    check_id("todo", todo_id)
    if agent_id is not None:
        check_id("agent", agent_id)

    def change(state: GoalState) -> Todo:
        todo = require_todo(state, todo_id)
        if todo.status == "done":
            return todo  # completing twice changes nothing
        if todo.kind == "agent":
            if agent_id is None:
                raise UsageError("completing an agent todo needs --agent-id")
            if todo.claimed_by != agent_id:
                raise ConflictError(f"todo {todo_id!r} is not claimed by {agent_id!r}: claim it first")
        holder = todo.claimed_by
        if holder is not None:
            _refuse_unsettled_turn(store, state, goal_id, holder, todo_id)
        todo.evidence.extend(e.strip() for e in evidence or [] if e.strip())
        todo.end_claim("done", now)
        if holder is not None:
            _end_settled_turn(store, state, goal_id, holder, todo_id)
        return todo

    return store.update_goal(goal_id, change)


def _refuse_unsettled_turn(store: Store, state: GoalState, goal_id: str, agent_id: str, todo_id: str) -> None:
    """Work an open turn is advancing completes through that turn's settlement, never beside it.

    Completing it directly would settle the work with nothing charged and leave the turn to
    fail on a lost lease. An unreadable journal raises its own error (doctor repairs it).
    """
    key = state.open_turns.get(agent_id)
    if key is None:
        return
    journal = store.read_journal(goal_id, key)
    if journal.status != "open" or journal.identity.get("todo_id") != todo_id:
        return
    where = f"-g {goal_id} -a {agent_id} -k {key}"
    written = journal.phase("durable_writeback") is not None
    settle = "loopx turn spend" if written else "loopx turn writeback, then loopx turn spend"
    raise SettlementError(
        "receipt_missing" if written else "writeback_missing",
        f"todo {todo_id!r} is advanced by agent {agent_id!r}'s open turn: settle it ({settle} {where}),"
        f" or give it up (loopx turn cancel {where})",
        step="complete",
    )


def _end_settled_turn(store: Store, state: GoalState, goal_id: str, agent_id: str, todo_id: str) -> None:
    """A settled turn on a todo whose claim just ended (done, released, blocked) frees its agent's slot."""
    key = state.open_turns.get(agent_id)
    if key is None:
        return
    try:
        journal = store.read_journal(goal_id, key)
    except LoopxError:
        return  # a damaged or missing journal is doctor's to report, not completion's
    if journal.status == "committed" and journal.identity.get("todo_id") == todo_id:
        del state.open_turns[agent_id]


def block_todo(store: Store, goal_id: str, todo_id: str, reason: str, now: datetime) -> Todo:
    """Mark a todo blocked (its lease, if any, is dropped)."""
    check_id("goal", goal_id)
    check_id("todo", todo_id)
    if not reason.strip():
        raise UsageError("blocking a todo needs a --reason")

    def change(state: GoalState) -> Todo:
        todo = require_todo(state, todo_id)
        if todo.status == "done":
            raise RefusedError(f"todo {todo_id!r} is already done", code="already_done")
        holder = todo.claimed_by
        todo.blocked_reason = reason.strip()
        todo.end_claim("blocked", now)
        if holder is not None:
            _end_settled_turn(store, state, goal_id, holder, todo_id)
        return todo

    return store.update_goal(goal_id, change)


def show_todo(store: Store, goal_id: str, todo_id: str) -> Todo:
    """One todo of a goal."""
    check_id("goal", goal_id)
    require_goal(store.read_registry(), goal_id)
    return require_todo(store.read_goal(goal_id), todo_id)


def archive_todo(store: Store, goal_id: str, todo_id: str, now: datetime, reason: str | None = None) -> Todo:
    """Archive a todo: it is `deferred` (no agent is offered it), kept with its history.

    A claimed todo is refused (conflict): release it or let its turn settle first; a done
    todo stays done. `loopx todo update` re-opens an archived todo.
    """
    check_id("goal", goal_id)
    require_goal(store.read_registry(), goal_id)
    check_id("todo", todo_id)

    def change(state: GoalState) -> Todo:
        todo = require_todo(state, todo_id)
        if todo.status == "done":
            raise RefusedError(f"todo {todo_id!r} is done: it stays in the history", code="todo_done")
        if todo.status == "claimed":
            raise ConflictError(f"todo {todo_id!r} is claimed by {todo.claimed_by!r}: release it first")
        todo.status = "deferred"
        todo.blocked_reason = (reason or "").strip() or "archived"
        todo.updated_at = now
        return todo

    return store.update_goal(goal_id, change)
