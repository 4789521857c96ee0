"""The should-run scenario matrix: every quota state, lane, gate action and agent field.

Each scenario builds state through the real operations (no hand-made packets) and names
the agent that asks; `ask` is what that agent's host reports as available capabilities.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from loopx_core.models.records import HealthFinding
from loopx_core.ops import gates, goals, spend, todos
from tests.conftest import Project


@dataclass(frozen=True)
class Ask:
    """Who asks should-run, with which capabilities available now (None: as registered)."""

    agent_id: str = "builder"
    available: tuple[str, ...] | None = None
    minutes: float = 0.0


Setup = Callable[[Project], Ask]


def base(p: Project, *, compute: float = 0.5, min_interval: float | None = None) -> None:
    """Goal `g` (compute 0.5) with agents builder (python, shell) and reviewer (review)."""
    goals.add_goal(
        p.store, "g", "Ship the parser", p.at(0), compute=compute, min_interval_minutes=min_interval
    )
    goals.register_agent(p.store, "builder", ["python", "shell"], p.at(0))
    goals.register_agent(p.store, "reviewer", ["review"], p.at(0))


def add(p: Project, title: str, **kw: object) -> str:
    """Add an agent todo; returns its id."""
    return todos.add_todo(p.store, "g", title, p.at(0), **kw).todo_id  # type: ignore[arg-type]


def eligible_workspace(p: Project) -> Ask:
    base(p)
    add(p, "Write parser", priority=1, required_capabilities=["python"])
    add(p, "Write docs", priority=2)
    return Ask()


def eligible_lease_held(p: Project) -> Ask:
    base(p)
    add(p, "Write parser", priority=3)
    tid = add(p, "Fix lexer", priority=1)
    todos.claim_todo(p.store, "g", "t1", "builder", p.at(0))
    del tid
    return Ask(minutes=5)


def replan_frontier_empty(p: Project) -> Ask:
    base(p)
    add(p, "Write parser")
    todos.claim_todo(p.store, "g", "t1", "builder", p.at(0))
    todos.complete_todo(p.store, "g", "t1", p.at(1), agent_id="builder", evidence=["tests pass"])
    return Ask(minutes=2)


def waiting_claimed_by_other(p: Project) -> Ask:
    base(p)
    add(p, "Write parser")
    todos.claim_todo(p.store, "g", "t1", "reviewer", p.at(0))
    return Ask(minutes=1)


def eligible_expired_lease_taken_over(p: Project) -> Ask:
    base(p)
    add(p, "Write parser")
    todos.claim_todo(p.store, "g", "t1", "reviewer", p.at(0), lease_minutes=10)
    return Ask(minutes=11)


def waiting_bound_to_other(p: Project) -> Ask:
    base(p)
    add(p, "Review parser", bound_agent="reviewer")
    return Ask()


def waiting_excluded(p: Project) -> Ask:
    base(p)
    add(p, "Write parser", excluded_agents=["builder"])
    return Ask()


def eligible_blocks_agent_narrows_scope(p: Project) -> Ask:
    base(p)
    add(p, "Anything else", priority=0)
    add(p, "Rebase first", priority=5, blocks_agent="builder")
    return Ask()


def waiting_not_due(p: Project) -> Ask:
    base(p, min_interval=30)
    add(p, "Write parser")
    spend.spend(p.store, "g", "builder", p.at(0), slots=2, turn_instance_id="ti-a")
    return Ask(minutes=10)


def throttled(p: Project) -> Ask:
    base(p, compute=0.005)  # floor(1440 * 0.005) = 7 slots
    add(p, "Write parser")
    spend.spend(p.store, "g", "builder", p.at(0), slots=4)
    spend.spend(p.store, "g", "reviewer", p.at(30), slots=3)
    return Ask(minutes=60)


def eligible_after_void(p: Project) -> Ask:
    throttled(p)
    spend.void(p.store, "g", "ev-2", p.at(40), reason="charged twice")
    return Ask(minutes=60)


def paused_goal_stopped(p: Project) -> Ask:
    base(p)
    add(p, "Write parser")
    goals.set_goal_status(p.store, "g", "stopped", p.at(0))
    return Ask()


def paused_compute_zero(p: Project) -> Ask:
    base(p, compute=0)
    add(p, "Write parser")
    return Ask()


def blocked_health_high_finding(p: Project) -> Ask:
    base(p)
    add(p, "Write parser")
    finding = HealthFinding(code="disk_full", severity="high", message="evidence volume is full")
    p.store.update_goal("g", lambda s: s.health.append(finding))
    return Ask()


def blocked_health_corrupt_state(p: Project) -> Ask:
    base(p)
    add(p, "Write parser")
    path = p.store.goal_path("g")
    path.write_bytes(path.read_bytes()[:40])
    return Ask()


def operator_gate_open_gate(p: Project) -> Ask:
    base(p)
    add(p, "Write parser")
    gates.open_gate(p.store, "g", "Approve the schema change", p.at(0), gate_id="schema")
    return Ask()


def operator_gate_user_todo_blocks_agent(p: Project) -> Ask:
    base(p)
    add(p, "Write parser")
    add(p, "Provide API token", kind="user", blocks_agent="builder")
    return Ask()


def eligible_gate_blocks_other_agent(p: Project) -> Ask:
    base(p)
    add(p, "Write parser")
    gates.open_gate(p.store, "g", "Reviewer needs access", p.at(0), blocks_agent="reviewer")
    return Ask()


def focus_wait_not_due(p: Project) -> Ask:
    base(p)
    add(p, "Write parser")
    gates.focus_wait(p.store, "g", "CI run 42", p.at(0), for_minutes=120, poll_every_minutes=30)
    return Ask(minutes=10)


def focus_wait_monitor_due(p: Project) -> Ask:
    base(p)
    add(p, "Write parser")
    gates.focus_wait(p.store, "g", "CI run 42", p.at(0), for_minutes=120, poll_every_minutes=30)
    return Ask(minutes=31)


def capability_repair_bridge(p: Project) -> Ask:
    base(p)
    add(p, "Write parser", required_capabilities=["python"])
    return Ask(available=("shell",))


def capability_ask_owner(p: Project) -> Ask:
    base(p)
    add(p, "Deploy to staging", required_capabilities=["deploy"])
    return Ask()


def capability_unsupported(p: Project) -> Ask:
    base(p)
    add(p, "Review parser", required_capabilities=["review"])
    return Ask()


def capability_prefers_capable_todo(p: Project) -> Ask:
    base(p)
    add(p, "Deploy to staging", priority=0, required_capabilities=["deploy"])
    add(p, "Write parser", priority=4, required_capabilities=["python"])
    return Ask()


def waiting_monitor_only(p: Project) -> Ask:
    base(p)
    goals.register_agent(p.store, "watcher", ["python"], p.at(0), monitor_only=True)
    add(p, "Write parser", required_capabilities=["python"])
    return Ask(agent_id="watcher")


def focus_wait_monitor_only_polls(p: Project) -> Ask:
    base(p)
    goals.register_agent(p.store, "watcher", [], p.at(0), monitor_only=True)
    add(p, "Write parser")
    gates.focus_wait(p.store, "g", "CI is running", p.at(0), for_minutes=120, poll_every_minutes=10)
    return Ask(agent_id="watcher", minutes=15)


SCENARIOS: dict[str, Setup] = {
    fn.__name__: fn
    for fn in (
        eligible_workspace,
        eligible_lease_held,
        replan_frontier_empty,
        waiting_claimed_by_other,
        eligible_expired_lease_taken_over,
        waiting_bound_to_other,
        waiting_excluded,
        eligible_blocks_agent_narrows_scope,
        waiting_not_due,
        throttled,
        eligible_after_void,
        paused_goal_stopped,
        paused_compute_zero,
        blocked_health_high_finding,
        blocked_health_corrupt_state,
        operator_gate_open_gate,
        operator_gate_user_todo_blocks_agent,
        eligible_gate_blocks_other_agent,
        focus_wait_not_due,
        focus_wait_monitor_due,
        capability_repair_bridge,
        capability_ask_owner,
        capability_unsupported,
        capability_prefers_capable_todo,
        waiting_monitor_only,
        focus_wait_monitor_only_polls,
    )
}
