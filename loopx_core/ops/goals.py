"""Goals and agents: create, configure, stop, resume, register."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from loopx_core import faults
from loopx_core.errors import ConflictError, LoopxError, UsageError
from loopx_core.ids import check_capabilities, check_id
from loopx_core.models.constants import SCHEMA_VERSION
from loopx_core.models.domain import check, check_optional
from loopx_core.models.records import AgentEntry, GoalEntry, GoalState, QuotaPolicy, Registry
from loopx_core.ops.require import require_agent, require_goal
from loopx_core.store.base import Store

MOVES: dict[str, frozenset[str]] = {
    "active": frozenset({"stopped", "done"}),
    "stopped": frozenset({"active", "done"}),
    "done": frozenset(),
}
"""The legal status changes: stop and resume between active and stopped, archive (or a turn's
terminal closeout) to done from either. Done is final: only `goal resume --reopen` leaves it
(`reopen`), and nothing else may change a done goal (stopping or configuring it included).
Asking for the status a goal already has changes nothing and writes nothing."""


def _done_refusal(goal_id: str, what: str) -> ConflictError:
    return ConflictError(
        f"goal {goal_id!r} is done (archived): {what}; "
        f"`loopx goal resume --goal-id {goal_id} --reopen` makes it active again"
    )


def check_move(goal: GoalEntry, status: str, *, reopen: bool = False) -> bool:
    """Whether moving `goal` to `status` changes it (False: it is already there); an illegal
    move is a `ConflictError` naming the way out, an unknown status a `UsageError`."""
    if status not in MOVES:
        raise UsageError(f"unknown goal status {status!r}: use one of {', '.join(MOVES)}")
    if goal.status == status:
        return False
    if status in MOVES[goal.status] or (reopen and goal.status == "done" and status == "active"):
        return True
    verb = {"active": "it is not resumed", "stopped": "it cannot be stopped"}[status]
    raise _done_refusal(goal.goal_id, verb)


def _check_text(option: str, value: str) -> None:
    """Refuse text that cannot be stored (a lone surrogate: a byte that was not UTF-8 in argv)
    before anything is written, rather than failing half-way through the write."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError(f"{option} {value!r} is not valid UTF-8 text") from None


def policy_from(base: QuotaPolicy, **changes: float | None) -> QuotaPolicy:
    """A copy of `base` with the given (non-None) fields changed, each checked against its domain."""
    checked = {
        name: check("--" + name.replace("_", "-"), QuotaPolicy.FIELDS[name].kind, value)
        for name, value in changes.items()
        if value is not None
    }
    return base.replace(**checked)


def add_goal(
    store: Store,
    goal_id: str,
    objective: str,
    now: datetime,
    *,
    no_progress_limit: int | None = None,
    **quota: float | None,
) -> GoalEntry:
    """Create a goal: its registry entry and an empty state."""
    check_id("goal", goal_id)
    limit = check_optional("--no-progress-limit", "NoProgressLimit", no_progress_limit)
    if not objective.strip():
        raise UsageError("a goal needs a non-empty --objective")
    _check_text("--objective", objective)
    policy = policy_from(QuotaPolicy(), **quota)

    def change(registry: Registry) -> GoalEntry:
        if goal_id in registry.goals:
            raise ConflictError(f"goal {goal_id!r} already exists (use `loopx goal configure`)")
        entry = GoalEntry(
            goal_id=goal_id,
            objective=objective.strip(),
            quota=policy,
            created_at=now,
            updated_at=now,
            **({"no_progress_limit": limit} if limit is not None else {}),
        )
        _create_state(store, goal_id)
        faults.point("after", "goal_state")
        registry.goals[goal_id] = entry
        return entry

    return store.update_registry(change)


def _create_state(store: Store, goal_id: str) -> None:
    """Write a new goal's empty state, or adopt the empty one an earlier `goal add` left when it
    died between its two writes (the state, then the registry entry): that add can be retried.

    Called under the registry's lock with no entry for the goal, so an existing state is one no
    registry knows; one with anything in it (todos, a version) is refused, never overwritten.
    """
    fresh = GoalState(schema_version=SCHEMA_VERSION, goal_id=goal_id)
    try:
        store.create_goal(fresh)
        return
    except ConflictError:
        pass
    try:
        found = store.read_goal(goal_id)
    except LoopxError as unreadable:
        raise ConflictError(
            f"goal {goal_id!r} has a state but no registry entry, and the state cannot be read "
            f"({unreadable}): move it aside, or add the goal under another id"
        ) from None
    if found.dump() != fresh.dump():
        raise ConflictError(
            f"goal {goal_id!r} has a state but no registry entry, and the state is not empty: "
            "restore the registry it belongs to, or add the goal under another id"
        )


def configure_goal(
    store: Store,
    goal_id: str,
    now: datetime,
    *,
    objective: str | None = None,
    no_progress_limit: int | None = None,
    **quota: float | None,
) -> GoalEntry:
    """Change a goal's objective, quota policy or no-progress limit (refused once it is done)."""
    limit = check_optional("--no-progress-limit", "NoProgressLimit", no_progress_limit)

    def change(registry: Registry) -> GoalEntry:
        goal = require_goal(registry, goal_id)
        if goal.status == "done":
            raise _done_refusal(goal_id, "it cannot be configured")
        if objective is not None:
            if not objective.strip():
                raise UsageError("--objective must not be empty")
            _check_text("--objective", objective)
            goal.objective = objective.strip()
        goal.quota = policy_from(goal.quota, **quota)
        if limit is not None:
            goal.no_progress_limit = limit
        goal.updated_at = now
        return goal

    return store.update_registry(change)


def set_goal_status(
    store: Store, goal_id: str, status: str, now: datetime, *, reopen: bool = False
) -> GoalEntry:
    """Stop (hard pause), resume or archive a goal, as `MOVES` allows (`reopen`: a done goal too).

    A goal already in `status` is returned as it is, nothing written; an illegal move is refused
    (conflict) with nothing written.
    """
    goal = require_goal(store.read_registry(), goal_id)
    if not check_move(goal, status, reopen=reopen):
        return goal

    def change(registry: Registry) -> GoalEntry:
        goal = require_goal(registry, goal_id)
        check_move(goal, status, reopen=reopen)  # again under the lock: it may have moved since
        goal.status = status  # type: ignore[assignment]
        goal.updated_at = now
        return goal

    return store.update_registry(change)


def show_goal(store: Store, goal_id: str) -> dict[str, Any]:
    """A goal's registry entry and state, as JSON data."""
    goal = require_goal(store.read_registry(), goal_id)
    state = store.read_goal(goal_id)
    return {"goal": goal.dump(), "state": state.dump()}


def register_agent(
    store: Store,
    agent_id: str,
    capabilities: list[str],
    now: datetime,
    *,
    host: str | None = None,
    monitor_only: bool | None = None,
    cadence_minutes: float | None = None,
) -> AgentEntry:
    """Register an agent or update its capabilities (registration is idempotent).

    `host`, `monitor_only` and `cadence_minutes` keep their recorded values unless given.
    """
    check_id("agent", agent_id)
    cadence = check_optional("--cadence-minutes", "Minutes", cadence_minutes)
    caps = check_capabilities(capabilities)

    def change(registry: Registry) -> AgentEntry:
        existing = registry.agents.get(agent_id)
        entry = AgentEntry(
            agent_id=agent_id,
            capabilities=caps,
            host=host if host is not None else (existing.host if existing else None),
            monitor_only=monitor_only
            if monitor_only is not None
            else bool(existing and existing.monitor_only),
            cadence_minutes=cadence
            if cadence is not None
            else (existing.cadence_minutes if existing else None),
            registered_at=existing.registered_at if existing else now,
            updated_at=now,
        )
        registry.agents[agent_id] = entry
        return entry

    return store.update_registry(change)


def grant_capabilities(store: Store, agent_id: str, capabilities: list[str], now: datetime) -> AgentEntry:
    """Add capabilities to a registered agent, read and written under the registry's lock, so
    concurrent grants and registrations never undo each other."""
    check_id("agent", agent_id)
    caps = check_capabilities(capabilities)
    if not caps:
        raise UsageError("a grant needs a capability")

    def change(registry: Registry) -> AgentEntry:
        entry = require_agent(registry, agent_id)
        entry.capabilities = sorted({*entry.capabilities, *caps})
        entry.updated_at = now
        return entry

    return store.update_registry(change)


def archive_goal(store: Store, goal_id: str, now: datetime) -> GoalEntry:
    """Archive a goal: it is `done` (should-run says so), its state, runs and ledger all kept.

    Refused (conflict) while an agent has an open turn in it: cancel or settle that first.
    Archiving a done goal changes nothing; `loopx goal resume --reopen` makes it active again.
    """
    check_id("goal", goal_id)
    goal = require_goal(store.read_registry(), goal_id)
    if goal.status == "done":
        return goal
    busy = sorted(store.read_goal(goal_id).open_turns)
    if busy:
        raise ConflictError(
            f"goal {goal_id!r} has an open turn of {', '.join(busy)}: cancel or settle it first"
        )
    return set_goal_status(store, goal_id, "done", now)


def list_agents(store: Store) -> list[AgentEntry]:
    """Every registered agent, by id."""
    return sorted(store.read_registry().agents.values(), key=lambda a: a.agent_id)


def show_agent(store: Store, agent_id: str) -> dict[str, Any]:
    """An agent's registry entry and, per goal, the turn it has open and the todos it holds."""
    registry = store.read_registry()
    agent = require_agent(registry, agent_id)
    work = []
    for goal_id in sorted(registry.goals):
        state = store.read_goal(goal_id)
        held = [t.todo_id for t in state.todos if t.claimed_by == agent_id]
        turn = state.open_turns.get(agent_id)
        if held or turn:
            work.append({"goal_id": goal_id, "open_turn": turn, "claimed_todos": held})
    return {"agent": agent.dump(exclude_none=True), "work": work}


def remove_agent(store: Store, agent_id: str) -> AgentEntry:
    """Unregister an agent that holds nothing: no open turn, no claimed todo (else a conflict).

    Runs, ledger events and journals keep naming it (they are history); registering the same
    id again later is allowed.
    """
    held = show_agent(store, agent_id)["work"]
    if held:
        where = ", ".join(w["goal_id"] for w in held)
        raise ConflictError(
            f"agent {agent_id!r} still holds work in {where}: cancel its turn or release its todos first"
        )

    def change(registry: Registry) -> AgentEntry:
        return registry.agents.pop(require_agent(registry, agent_id).agent_id)

    return store.update_registry(change)
