"""The `loopx_quota_should_run_v1` packet: load (read-only), assess, around layers, assemble."""

from __future__ import annotations

from typing import TYPE_CHECKING

from loopx_core.clock import iso
from loopx_core.decide.assess import Inputs, assess
from loopx_core.decide.layers import run_layers
from loopx_core.errors import NotFoundError, StateInvalidError
from loopx_core.ids import check_capabilities, check_id
from loopx_core.kernel.plan import build_plan
from loopx_core.models.identity import SettlementIdentity
from loopx_core.quota import compute_usage, lookback

if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime
    from typing import Any

    from loopx_core.decide.assess import Assessment
    from loopx_core.decide.layers import Decision
    from loopx_core.models.records import Registry
    from loopx_core.store.base import Store

    Packet = dict[str, Any]
    HintContributor = Callable[[Packet], None]

PACKET_SCHEMA = "loopx_quota_should_run_v1"


def load_inputs(
    store: Store,
    goal_id: str,
    agent_id: str | None,
    now: datetime,
    *,
    available_capabilities: tuple[str, ...] | None = None,
    surface: str | None = None,
    current_rrule: str | None = None,
    registry: Registry | None = None,
) -> Inputs:
    """Read registry, goal state and the ledger tail; a broken file becomes `health_error`.

    `registry`: one already read (`loopx status` reads it once for every goal, not once a goal).
    """
    check_id("goal", goal_id)
    if agent_id is not None:
        check_id("agent", agent_id)
    if available_capabilities is not None:
        available_capabilities = tuple(
            check_capabilities(available_capabilities, option="--available-capability")
        )
    base = Inputs(
        goal_id,
        agent_id,
        now,
        available_capabilities=available_capabilities,
        surface=surface,
        current_rrule=(current_rrule or "").strip()[:200] or None,
        store=store.label,
    )
    try:
        registry = registry if registry is not None else store.read_registry()
    except StateInvalidError as exc:
        return base._replace(health_error=exc.message)
    goal = registry.goals.get(goal_id)
    if goal is None:
        raise NotFoundError(
            f"goal {goal_id!r} not found: `loopx goal add --goal-id {goal_id} ...` creates it"
        )
    agent = None
    if agent_id is not None:
        agent = registry.agents.get(agent_id)
        if agent is None:
            raise NotFoundError(
                f"agent {agent_id!r} is not registered: run `loopx agent register --agent-id {agent_id}`"
            )
    loaded = base._replace(goal=goal, agent=agent, agents=tuple(registry.agents.values()))
    try:
        state = store.read_goal(goal_id)
        events = store.ledger_since(goal_id, now - lookback(goal.quota))
    except (StateInvalidError, NotFoundError) as exc:
        return loaded._replace(health_error=exc.message)
    usage = compute_usage(goal.quota, events, now)
    open_turn = None
    key = state.open_turns.get(agent_id) if agent_id else None
    if key is not None:
        try:
            journal = store.read_journal(goal_id, key)
            open_turn = journal if journal.status in ("open", "failed", "committed") else None
        except (StateInvalidError, NotFoundError) as exc:
            return loaded._replace(health_error=f"open turn of {agent_id!r}: {exc.message}")
    return loaded._replace(
        state=state, usage=usage, open_turn=open_turn, scheduler=_scheduler(store, goal_id, agent_id)
    )


def _scheduler(store: Store, goal_id: str, agent_id: str | None) -> Any:
    """The agent's scheduler entry; an unreadable one only costs the backoff, never the decision."""
    if agent_id is None:
        return None
    try:
        return store.read_scheduler(goal_id).agents.get(agent_id)
    except StateInvalidError:
        return None


def build_packet(inputs: Inputs, *, contributors: tuple[HintContributor, ...] = ()) -> Packet:
    """Assess, run the around layers, and assemble the packet (pure: no I/O)."""
    assessment = assess(inputs)
    decision, fields = run_layers(inputs, assessment)
    packet: Packet = {
        "schema": PACKET_SCHEMA,
        "goal_id": inputs.goal_id,
        "agent_id": inputs.agent_id,
        "evaluated_at": iso(inputs.now),
        "store": inputs.store,
        "decision": decision.decision,
        "should_run": decision.should_run,
        "effective_action": decision.effective_action,
        "recommended_action": decision.recommended_action,
        "reason": decision.reason,
        "quota": _quota(inputs, assessment),
    }
    if inputs.surface:
        packet["surface"] = inputs.surface
    if "capability_gate" in fields:
        packet["capability_gate"] = fields["capability_gate"]
    interaction = fields["interaction_contract"]
    cli: dict[str, Any] = {"next_cli_actions": list(decision.next_cli_actions)}
    if decision.next_cli_actions:
        cli["execution_mode"] = "serial"  # each command after the one before it succeeded
    interaction["cli_channel"] = cli
    packet["interaction_contract"] = interaction
    packet["work_lane_contract"] = fields["work_lane_contract"]
    packet["selected_todo"] = _todo(assessment)
    if assessment.candidates:
        packet["action_portfolio"] = _portfolio(assessment)
    if "allowed_slots" in packet["quota"]:
        packet["planning_horizon"] = _horizon(packet["quota"])
    packet["settlement_plan"] = _plan(inputs, decision, assessment)
    packet["scheduler_hint"] = fields["scheduler_hint"]
    packet["protocol_action_packet"] = {"summary": _summary(decision, assessment, packet)}
    for contribute in contributors:
        contribute(packet)
    return packet


def _quota(inputs: Inputs, a: Assessment) -> dict[str, Any]:
    out: dict[str, Any] = {"state": a.state}
    if inputs.goal is not None:
        policy = inputs.goal.quota
        out.update(
            compute=policy.compute,
            window_hours=policy.window_hours,
            slot_minutes=policy.slot_minutes,
        )
    if inputs.usage is not None:
        out.update(allowed_slots=inputs.usage.allowed_slots, spent_slots=inputs.usage.spent_slots)
    out["next_eligible_at"] = iso(a.next_eligible_at) if a.next_eligible_at else None
    return out


PORTFOLIO_TODOS = 5
"""Most todos an action portfolio lists (the rest are counted)."""


def _portfolio(a: Assessment) -> dict[str, Any]:
    """The todos open to the agent now, in the order it would take them (`Assessment.candidates`)."""
    ordered = a.candidates
    shown = [
        {"todo_id": t.todo_id, "priority": t.priority}
        | ({"required_capabilities": t.required_capabilities} if t.required_capabilities else {})
        for t in ordered[:PORTFOLIO_TODOS]
    ]
    return {"todos": shown, "more": max(0, len(ordered) - PORTFOLIO_TODOS)}


def _horizon(quota: dict[str, Any]) -> dict[str, Any]:
    """How far ahead the agent may plan: the slots (and minutes of compute) left in the window."""
    left = max(0, quota["allowed_slots"] - quota["spent_slots"])
    return {
        "slots_left": left,
        "minutes_left": round(left * quota["slot_minutes"], 3),
        "window_hours": quota["window_hours"],
        "next_eligible_at": quota["next_eligible_at"],
    }


def _todo(a: Assessment) -> dict[str, Any] | None:
    todo = a.selected
    if todo is None:
        return None
    out: dict[str, Any] = {"todo_id": todo.todo_id, "title": todo.title, "priority": todo.priority}
    if todo.required_capabilities:
        out["required_capabilities"] = todo.required_capabilities
    if todo.claimed_by:
        out["claimed_by"] = todo.claimed_by
    return out


def _plan(inputs: Inputs, d: Decision, a: Assessment) -> dict[str, Any] | None:
    if d.turn_instance_id is None or inputs.agent_id is None:
        return None
    if inputs.open_turn is not None:
        identity = inputs.open_turn.settlement_identity()
        steps = list(inputs.open_turn.plan)
    else:
        identity = SettlementIdentity(
            goal_id=inputs.goal_id,
            agent_id=inputs.agent_id,
            todo_id=a.selected.todo_id if a.selected else None,
            turn_instance_id=d.turn_instance_id,
            replan_obligation_id=d.replan_obligation_id,
        )
        steps = [str(s.kind) for s in build_plan(identity).steps] + ["terminal_closeout?"] * bool(
            identity.todo_id
        )
    return {
        "identity": identity.to_json(),
        "effect_id": identity.effect_id,
        "turn_key": identity.turn_key,
        "steps": steps,
    }


def _summary(d: Decision, a: Assessment, packet: Packet) -> str:
    quota = packet["quota"]
    slots = (
        f"{quota['spent_slots']}/{quota['allowed_slots']} slots"
        if "spent_slots" in quota
        else "quota unknown"
    )
    return f"{d.decision}: {d.effective_action} ({a.state}, {packet['work_lane_contract']['lane']}); {slots}"
