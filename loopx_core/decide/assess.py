"""Assessment: the seven quota states, evaluated in precedence order for one goal and agent."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, NamedTuple

from loopx_core.clock import iso
from loopx_core.decide import scope
from loopx_core.quota import EVALUATION_ORDER

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Literal

    from loopx_core.models.records import AgentEntry, GoalEntry, GoalState, Todo
    from loopx_core.quota import QuotaState, QuotaUsage

    Lane = Literal["inbox", "workspace", "replan", "monitor"]


class Inputs(NamedTuple):
    """Everything a decision reads, loaded once; should-run never writes."""

    goal_id: str
    agent_id: str | None
    now: datetime
    goal: GoalEntry | None = None
    state: GoalState | None = None
    agent: AgentEntry | None = None
    agents: tuple[AgentEntry, ...] = ()
    """Every registered agent (the capability gate looks for another that could serve)."""
    usage: QuotaUsage | None = None
    available_capabilities: tuple[str, ...] | None = None
    surface: str | None = None
    health_error: str | None = None
    """Set when the registry, state or ledger could not be read or validated."""
    open_turn: Any = None
    """The asking agent's open turn journal (a `TurnJournal`), if it has one."""
    scheduler: Any = None
    """The asking agent's scheduler entry (`SchedulerEntry`): what the host last applied."""
    current_rrule: str | None = None
    """The heartbeat's rrule as the host reports it now (`--current-rrule`), if it said."""
    store: str = "files"
    """The store the state was read from: `files`, or a redacted DSN (`postgresql://host/db`)."""

    @property
    def capabilities_now(self) -> frozenset[str]:
        """Capabilities available this tick: as reported by the host, else as registered."""
        if self.available_capabilities is not None:
            return frozenset(self.available_capabilities)
        return frozenset(self.agent.capabilities if self.agent else ())


class Assessment(NamedTuple):
    """The quota state and what led to it."""

    state: QuotaState
    reason: str
    reason_codes: tuple[str, ...]
    lane: Lane
    selected: Todo | None = None
    candidates: tuple[Todo, ...] = ()
    """The todos in scope, in the order the agent takes them (the selected one first)."""
    blockers: tuple[str, ...] = ()
    next_eligible_at: datetime | None = None
    monitor_due: bool = False


def assess(inputs: Inputs) -> Assessment:
    """Evaluate the seven states in `EVALUATION_ORDER`, first match wins (SPEC §3)."""
    for state in EVALUATION_ORDER:
        found = CHECKS[state](inputs)
        if found is not None:
            return found
    raise AssertionError("the eligible check always answers")  # pragma: no cover


def _paused(inputs: Inputs) -> Assessment | None:
    goal = inputs.goal
    if goal is None or (goal.status == "active" and goal.quota.compute > 0):
        return None
    code, why = {
        "stopped": ("goal_stopped", "goal is stopped"),
        "done": ("goal_done", "goal is done (terminal closeout)"),
    }.get(goal.status, ("compute_zero", "compute quota is 0 (hard pause)"))
    return Assessment("paused", why, (code,), "workspace")


def _blocked_health(inputs: Inputs) -> Assessment | None:
    if inputs.health_error is not None or inputs.goal is None or inputs.state is None or inputs.usage is None:
        return Assessment(
            "blocked_health", inputs.health_error or "state unavailable", ("state_invalid",), "inbox"
        )
    high = [h for h in inputs.state.health if h.severity == "high"]
    if high:
        why = f"health finding {high[0].code}: {high[0].message}"
        return Assessment("blocked_health", why, ("health_high",), "inbox")
    return None


def _operator_gate(inputs: Inputs) -> Assessment | None:
    blockers = scope.operator_blockers(_state(inputs), inputs.agent_id)
    if not blockers:
        return None
    why = f"waiting for the owner on {', '.join(blockers)}"
    return Assessment("operator_gate", why, ("operator_gate",), "inbox", blockers=tuple(blockers))


def _focus_wait(inputs: Inputs) -> Assessment | None:
    focus = _state(inputs).waiting_on
    if focus is None or focus.until <= inputs.now:
        return None
    due = _monitor_due_at(focus.poll_every_minutes, focus.last_polled_at or focus.since)
    monitor_due = due is not None and due <= inputs.now
    resume = focus.until if due is None or monitor_due else min(due, focus.until)
    return Assessment(
        "focus_wait",
        f"waiting on external evidence: {focus.reason}",
        ("focus_wait", "monitor_due" if monitor_due else "monitor_not_due"),
        "monitor",
        next_eligible_at=resume,
        monitor_due=monitor_due,
    )


def _throttled(inputs: Inputs) -> Assessment | None:
    usage = _usage(inputs)
    if not usage.exhausted:
        return None
    return Assessment(
        "throttled",
        f"{usage.spent_slots}/{usage.allowed_slots} slots spent in the {usage.policy.window_hours:g}h window",
        ("quota_exhausted",),
        "workspace",
        next_eligible_at=usage.released_at(),
    )


def _waiting(inputs: Inputs) -> Assessment | None:
    due = _usage(inputs).due_at(inputs.agent_id)
    if due is not None:
        why = f"not due until {iso(due)} (min interval)"
        return Assessment("waiting", why, ("not_due",), "workspace", next_eligible_at=due)
    state = _state(inputs)
    if inputs.agent is not None and inputs.agent.monitor_only:
        why = "this agent is monitor-only: it observes and polls, never takes work"
        return Assessment("waiting", why, ("monitor_only",), "monitor")
    if inputs.agent_id is None or scope.in_scope(state, inputs.agent_id, inputs.now):
        return None
    if not scope.open_agent_work(state):
        return None  # nothing open at all: eligible, to replan the frontier
    return Assessment(
        "waiting", "open todos exist but none this agent may take", ("nothing_in_scope",), "workspace"
    )


def _eligible(inputs: Inputs) -> Assessment:
    state = _state(inputs)
    if inputs.agent_id is None:
        return _goal_level(state)
    candidates = tuple(scope.in_scope(state, inputs.agent_id, inputs.now))
    if not candidates:
        return Assessment(
            "eligible", "no open agent todos: replan the frontier", ("frontier_empty",), "replan"
        )
    have = inputs.capabilities_now
    capable: list[Todo] = []
    lacking: list[Todo] = []
    for todo in candidates:
        (capable if set(todo.required_capabilities) <= have else lacking).append(todo)
    candidates = (*capable, *lacking)  # the order the agent takes them in: what it can do first
    selected = candidates[0]
    code = "lease_held" if selected.claimed_by == inputs.agent_id else "todo_selected"
    return Assessment(
        "eligible",
        f"todo {selected.todo_id} is next",
        (code,),
        "workspace",
        selected=selected,
        candidates=candidates,
    )


def _state(inputs: Inputs) -> GoalState:
    assert inputs.state is not None  # blocked_health answers first when it is missing
    return inputs.state


def _usage(inputs: Inputs) -> QuotaUsage:
    assert inputs.usage is not None  # blocked_health answers first when it is missing
    return inputs.usage


CHECKS: dict[QuotaState, Callable[[Inputs], Assessment | None]] = {
    "paused": _paused,
    "blocked_health": _blocked_health,
    "operator_gate": _operator_gate,
    "focus_wait": _focus_wait,
    "throttled": _throttled,
    "waiting": _waiting,
    "eligible": _eligible,
}
"""One check per state; `assess` runs them in `EVALUATION_ORDER`, the one source of precedence."""


def _goal_level(state: GoalState) -> Assessment:
    """The agent-independent view used by `loopx status`."""
    if scope.open_agent_work(state):
        return Assessment("eligible", "open agent todos", ("todos_open",), "workspace")
    return Assessment("eligible", "no open agent todos: replan the frontier", ("frontier_empty",), "replan")


def _monitor_due_at(every_minutes: float | None, last: datetime) -> datetime | None:
    if every_minutes is None:
        return None
    return last + timedelta(minutes=every_minutes)
