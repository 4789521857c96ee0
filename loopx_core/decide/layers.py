"""The four around layers, applied in a fixed order over the base decision.

capability_gate -> interaction_contract -> work_lane_contract -> scheduler_hint.
Each layer may short-circuit or rewrite the next effect and reports it in its own packet
field; a short-circuit is kept by every later layer. There is no catch-all handler.
"""

from __future__ import annotations

import json
import math
from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple

from loopx_core import commands
from loopx_core.decide.scope import lease_lost, scope_refusal
from loopx_core.models.identity import SettlementIdentity, replan_obligation_id, sha256_hex, turn_instance_id

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Literal

    from loopx_core.decide.assess import Assessment, Inputs
    from loopx_core.models.records import Todo

    DecisionKind = Literal["run", "skip", "observe", "repair"]
    Fields = dict[str, Any]
    Layer = Callable[[Inputs, Assessment, "Decision", Fields], "Decision"]


class Decision(NamedTuple):
    """The decision as it flows through the around layers."""

    decision: DecisionKind
    should_run: bool
    effective_action: str
    recommended_action: str
    reason: str
    next_cli_actions: tuple[str, ...] = ()
    short_circuit: str | None = None
    """The layer that short-circuited, if any; later layers keep its effect."""
    turn_instance_id: str | None = None
    replan_obligation_id: str | None = None


PAUSED_SAYS = {
    "goal_done": "Goal is done: nothing left to run (`loopx goal resume -g {goal} --reopen` reopens it).",
    "goal_stopped": "Goal is stopped; `loopx goal resume -g {goal}` resumes it.",
    "compute_zero": "Compute quota is 0 (a hard pause); `loopx goal configure -g {goal} --compute 0.5` resumes it.",
}
"""What a paused goal's packet says, by why it is paused: each names the command that works."""


def base_decision(inputs: Inputs, a: Assessment) -> Decision:
    """The decision the quota state implies, before any around layer."""
    g, ag = inputs.goal_id, inputs.agent_id or "-"
    match a.state:
        case "paused":
            return Decision("skip", False, "pause", PAUSED_SAYS[a.reason_codes[0]].format(goal=g), a.reason)
        case "blocked_health":
            return Decision(
                "repair",
                False,
                "repair_state",
                f"Owner: repair the goal state ({a.reason}).",
                a.reason,
                (commands.command("doctor", "--repair"),),  # docs/doctor.md: what it mends
            )
        case "operator_gate":
            return Decision(
                "skip",
                False,
                "await_operator",
                f"Owner: resolve {', '.join(a.blockers)}.",
                a.reason,
            )
        case "focus_wait":
            return Decision("skip", False, "wait_focus", "Wait for the external evidence.", a.reason)
        case "throttled":
            return Decision("skip", False, "wait_quota", "Quota spent; wait for slots to free up.", a.reason)
        case "waiting":
            return Decision("skip", False, "wait", "Nothing to do now; check again later.", a.reason)
    if inputs.open_turn is not None:
        return _resume(inputs, a)
    version = inputs.state.version if inputs.state else 0
    if a.selected is None:
        obligation = replan_obligation_id(g, version)
        instance = turn_instance_id(g, ag, obligation, version)
        key = SettlementIdentity(g, ag, None, instance, obligation).turn_key
        return Decision(
            "run",
            True,
            "replan",
            "No open todos: add the next todos toward the objective, or stop the goal if it is met.",
            a.reason,
            (
                commands.begin_turn(g, ag, None, instance),
                commands.command("todo", "add", goal_id=g, title="<next step>"),
                commands.writeback(g, ag, key),
                commands.spend(g, ag, key),
            ),
            turn_instance_id=instance,
            replan_obligation_id=obligation,
        )
    todo = a.selected
    instance = turn_instance_id(g, ag, todo.todo_id, version)
    key = SettlementIdentity(g, ag, todo.todo_id, instance).turn_key
    last = (
        "; if nothing follows it, add `--no-follow-up` to the writeback and, after the spend, run "
        "`loopx turn closeout` instead of `todo complete` (the goal is done)"
        if a.lane == "workspace" and len(a.candidates) <= 1
        else ""
    )
    return Decision(
        "run",
        True,
        "work_todo",
        f"Work on todo {todo.todo_id}: {todo.title}{last}",
        a.reason,
        (
            commands.begin_turn(g, ag, todo.todo_id, instance),
            commands.writeback(g, ag, key),
            commands.spend(g, ag, key),
            commands.complete(g, ag, todo.todo_id),
        ),
        turn_instance_id=instance,
    )


def _resume(inputs: Inputs, a: Assessment) -> Decision:
    """The agent has an open turn: finish it before anything else."""
    from loopx_core.kernel.results import turn_result  # an open turn only: it loads the effect lens

    journal = inputs.open_turn
    packet = turn_result(journal)
    identity = journal.identity
    lost = (
        None
        if journal.status == "committed" or inputs.state is None
        else lease_lost(inputs.state, journal.settlement_identity())
    )
    if lost:  # settling it can only be refused (lease_lost): the turn must end, not resume
        g, ag = inputs.goal_id, inputs.agent_id or "-"
        return Decision(
            "run",
            True,
            "cancel_turn",
            f"Cancel the open turn: {lost}; then ask should-run again.",
            f"lease lost on todo {identity.get('todo_id')}",
            (
                commands.command(
                    "turn", "cancel", goal_id=g, agent_id=ag, turn_key=journal.turn_key, reason="lease lost"
                ),
            ),
            turn_instance_id=identity["turn_instance_id"],
        )
    return Decision(
        "run",
        True,
        "resume_turn",
        f"Finish the open turn ({packet['next_phase'] or 'settled'} is next): do its work if it is "
        "not done, then run the actions below; a turn `loopx turn run-once` began: run that same "
        "command again with --resume.",
        f"open turn for {identity.get('todo_id') or identity.get('replan_obligation_id')}",
        tuple(packet["next_cli_actions"]),
        turn_instance_id=identity["turn_instance_id"],
        replan_obligation_id=identity.get("replan_obligation_id"),
    )


def capability_gate(inputs: Inputs, a: Assessment, d: Decision, out: Fields) -> Decision:
    """Gate the selected todo on the capabilities available now (ask_owner, repair_bridge, unsupported)."""
    todo = a.selected
    if d.short_circuit or todo is None:
        return d
    have = inputs.capabilities_now
    missing = [c for c in todo.required_capabilities if c not in have]
    if not missing:
        return d
    registered = set(inputs.agent.capabilities if inputs.agent else ())
    g, ag = inputs.goal_id, inputs.agent_id or "-"
    others = _capable_agents(inputs, todo, missing)
    repair_todo = repair_todo_id(todo.todo_id)
    if set(missing) <= registered:
        action, decision, run, owner = "repair_bridge", "repair", True, ag
        text = f"Repair the host bridge for {', '.join(missing)}, then ask should-run again."
        cli = (commands.command("quota", "should-run", goal_id=g, agent_id=ag),)
        if inputs.state is None or inputs.state.todo(repair_todo) is None:
            # should-run is read-only: the repair todo is the first next effect, run by the agent
            title = f"Repair the host bridge for {', '.join(missing)} (todo {todo.todo_id} needs it)"
            add = commands.command(
                "todo", "add", goal_id=g, todo_id=repair_todo, title=title, priority=0, bound_agent=ag
            )
            cli = (add, *cli)
    elif others:
        action, decision, run, owner = "unsupported", "skip", False, others[0]
        text = f"Leave todo {todo.todo_id} to {', '.join(others)}; this agent lacks {', '.join(missing)}."
        cli = ()
    else:
        action, decision, run, owner = "ask_owner", "skip", False, "owner"
        text = f"Owner: grant {', '.join(missing)} to an agent, or re-scope todo {todo.todo_id}."
        cli = ()
    out["capability_gate"] = {
        "action": action,
        "todo_id": todo.todo_id,
        "missing_capabilities": missing,
        "owner_missing": action == "ask_owner",
        "repair_missing": action == "repair_bridge",
        "decision_owner": owner,
    }
    if action == "repair_bridge":
        out["capability_gate"]["repair_todo_id"] = repair_todo
    return d._replace(
        decision=decision,
        should_run=run,
        effective_action=action,
        recommended_action=text,
        reason=f"todo {todo.todo_id} needs {', '.join(missing)}",
        next_cli_actions=cli,
        short_circuit="capability_gate",
        turn_instance_id=d.turn_instance_id if run else None,
    )


def repair_todo_id(todo_id: str) -> str:
    """The stable id of the repair todo for a todo whose host bridge lacks a capability (seed 000)."""
    return f"repair-{todo_id}"[:64].rstrip(".-_")


def _capable_agents(inputs: Inputs, todo: Todo, missing: list[str]) -> list[str]:
    """Other registered agents that hold every missing capability and may take the todo."""
    return [
        other.agent_id
        for other in inputs.agents
        if other.agent_id != inputs.agent_id
        and set(missing) <= set(other.capabilities)
        and scope_refusal(todo, other.agent_id, inputs.now) in (None, "claimed_by_other")
    ]


def interaction_contract(inputs: Inputs, a: Assessment, d: Decision, out: Fields) -> Decision:
    """Say who must act: the agent (autonomous), the owner, or nobody (quiet)."""
    out["interaction_contract"] = _channels(d)
    return d


def _channels(d: Decision) -> dict[str, Any]:
    owner_needed = d.effective_action in ("await_operator", "ask_owner", "repair_state")
    if owner_needed:
        mode = "owner_gate"
    elif d.decision in ("run", "repair"):
        mode = "autonomous"
    elif d.decision == "observe":
        mode = "monitor"
    else:
        mode = "quiet"
    return {
        "mode": mode,
        "user_channel": {"action_required": owner_needed, "notify": owner_needed},
        "agent_channel": {"must_attempt": d.should_run, "primary_action": d.effective_action},
    }


def work_lane_contract(inputs: Inputs, a: Assessment, d: Decision, out: Fields) -> Decision:
    """Route the turn to a lane; a due monitor poll preempts the wait and becomes an observe."""
    lane = a.lane
    codes = list(a.reason_codes)
    if d.short_circuit == "capability_gate":
        codes.append("capability_gate")
    if lane == "monitor" and a.monitor_due and not d.short_circuit:
        g, ag = inputs.goal_id, inputs.agent_id or "-"
        d = d._replace(
            decision="observe",
            should_run=True,
            effective_action="poll_evidence",
            recommended_action="Check the awaited evidence; clear the focus if it arrived, else record the poll.",
            next_cli_actions=(
                commands.command("focus", "poll", goal_id=g, agent_id=ag),
                commands.command("focus", "clear", goal_id=g, evidence="<evidence>"),
            ),
            short_circuit="work_lane_contract",
        )
        out["interaction_contract"] = _channels(d)  # the rewrite changes who acts: refresh the channels
    obligation = {
        "inbox": "await_owner",
        "workspace": {"work_todo": "advance_todo", "repair_bridge": "repair_bridge"}.get(
            d.effective_action, "none"
        ),
        "replan": "replan_frontier",
        "monitor": "poll_evidence" if d.decision == "observe" else "none",
    }[lane]
    out["work_lane_contract"] = {
        "lane": lane,
        "obligation": obligation,
        "next_lane": _next_lane(a, lane),
        "must_attempt_work": d.should_run and d.effective_action in ("work_todo", "replan", "resume_turn"),
        "reason_codes": codes,
    }
    return d


def _next_lane(a: Assessment, lane: str) -> str:
    if lane == "workspace" and a.selected is not None and len(a.candidates) <= 1:
        return "replan"
    if lane in ("inbox", "monitor"):
        return "workspace"
    return "workspace" if lane == "replan" else lane


ACTIVE_INTERVAL_MIN = 10
IDLE_INTERVAL_MIN = 60
MIN_INTERVAL_MIN = 5
BACKOFF_CAP_MIN = 120
BACKOFF_FACTOR = 2


def scheduler_hint(inputs: Inputs, a: Assessment, d: Decision, out: Fields) -> Decision:
    """Tell the host when to wake next: keep, delay, slow down, or pause; back off unchanged polls."""
    if a.state == "paused":
        action, cadence, minutes = "pause", "paused", None
    elif d.decision in ("run", "repair", "observe") and d.should_run:
        action, cadence, minutes = "keep", "active", ACTIVE_INTERVAL_MIN
    elif d.effective_action in ("await_operator", "ask_owner", "repair_state", "unsupported"):
        action, cadence, minutes = "slow", "idle", IDLE_INTERVAL_MIN
    else:
        action, cadence, minutes = "delay", "waiting", _minutes_until(a.next_eligible_at, inputs.now)
    fingerprint = _fingerprint(inputs, a, d)
    applied = inputs.scheduler
    unchanged = 0
    if minutes and not d.should_run and applied is not None and applied.fingerprint == fingerprint:
        unchanged = applied.unchanged_polls + 1
        minutes = min(BACKOFF_CAP_MIN, minutes * BACKOFF_FACTOR**unchanged)
        cadence = "backoff"
    rrule = f"FREQ=MINUTELY;INTERVAL={minutes}" if minutes else None
    hint: dict[str, Any] = {
        "action": action,
        "cadence_class": cadence,
        "recommended_rrule": rrule,
        "fingerprint": fingerprint,
        "unchanged_polls": unchanged,
        "unchanged_poll_backoff": {"factor": BACKOFF_FACTOR, "cap_minutes": BACKOFF_CAP_MIN},
    }
    hint.update(_scheduler_truth(inputs, applied, action, rrule, fingerprint))
    out["scheduler_hint"] = hint
    return d


def _scheduler_truth(
    inputs: Inputs, applied: Any, action: str, rrule: str | None, fingerprint: str
) -> dict[str, Any]:
    """What the host last reported against what this packet asks: an ack still owed, a failure.

    `rrule_must_change` compares with the rrule the host runs now (`--current-rrule`, else the
    one it last acked); after `scheduler-fail` the hint carries the failure count, the last
    error and when to retry, backing off by doubling up to the cap.
    """
    current = inputs.current_rrule or (applied.applied_rrule if applied is not None else None)
    paused_now = applied is not None and applied.paused and inputs.current_rrule is None
    wanted_pause = action == "pause"
    must_change = (not paused_now if wanted_pause else current != rrule) if (current or paused_now) else True
    failed = applied is not None and applied.failures > 0
    acked_this = applied is not None and applied.fingerprint == fingerprint and not failed
    truth: dict[str, Any] = {"rrule_must_change": must_change, "ack_expected": must_change or not acked_this}
    if failed:
        truth["failures"] = applied.failures
        truth["last_error"] = (applied.last_error or "")[:160]
        truth["retry_in_minutes"] = min(BACKOFF_CAP_MIN, 2 ** min(applied.failures, 10))
    return truth


def _fingerprint(inputs: Inputs, a: Assessment, d: Decision) -> str:
    """What makes a poll materially different: the decision, the state's version, the todo, the timing."""

    material = [
        d.decision,
        d.effective_action,
        a.state,
        a.selected.todo_id if a.selected else None,
        inputs.state.version if inputs.state else None,
        a.next_eligible_at.isoformat() if a.next_eligible_at else None,
    ]
    return "fp-" + sha256_hex(json.dumps(material))[:12]


def _minutes_until(when: datetime | None, now: datetime) -> int:
    if when is None:
        return IDLE_INTERVAL_MIN
    minutes = math.ceil((when - now).total_seconds() / 60)
    return min(IDLE_INTERVAL_MIN, max(MIN_INTERVAL_MIN, minutes))


AROUND_LAYERS: tuple[tuple[str, Layer], ...] = (
    ("capability_gate", capability_gate),
    ("interaction_contract", interaction_contract),
    ("work_lane_contract", work_lane_contract),
    ("scheduler_hint", scheduler_hint),
)
"""The around layers in their contractual order."""


def run_layers(
    inputs: Inputs, a: Assessment, layers: tuple[tuple[str, Layer], ...] = AROUND_LAYERS
) -> tuple[Decision, Fields]:
    """Apply the around layers in order; returns the final decision and each layer's field."""
    decision = base_decision(inputs, a)
    fields: Fields = {}
    for _name, layer in layers:
        decision = layer(inputs, a, decision, fields)
    return decision, fields
