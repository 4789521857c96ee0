"""The read-only effect lens over LoopX packets.

`model -> effect request -> LoopX interprets it -> observation -> model`: every packet maps
onto four frozen slots. The interpreters grant no authority: an interpreted journal has
`should_run = False` and an empty next effect. Runtime code reads packets through them (the
CLI renders next actions from `EffectNext`; the turn driver picks its next phase through
`interpret_turn_result_packet`; journal inspection is `interpret_turn_journal`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from loopx_core.effects.program import (
    EffectProgram,
    EffectStep,
    ExecutionMode,
    declared_mode,
    effect_program_from_ordered_steps,
)
from loopx_core.models.constants import PHASES, STATUSES, TOMBSTONES
from loopx_core.models.identity import SettlementIdentity

__all__ = [
    "EffectInterpretation",
    "EffectNext",
    "EffectObservation",
    "EffectProgram",
    "EffectRequest",
    "EffectStep",
    "EffectTurn",
    "effect_program_from_ordered_steps",
    "interpret_quota_should_run_packet",
    "interpret_turn_journal",
    "interpret_turn_result_packet",
]


PHASE_PURPOSE = {
    "host_execute": "the host does the turn's work",
    "typed_result": "the host's result, typed succeeded or failed",
    "validation": "the validation command judges the work",
    "durable_writeback": "the result is written back",
    "quota_spend": "the turn's slots are charged",
    "terminal_closeout": "the goal closes (no follow-up)",
}
"""What each phase step of a turn's program does."""


@dataclass(frozen=True)
class EffectRequest:
    """What was asked: the intent, without execution detail."""

    kind: str
    source: str
    goal_id: str | None = None
    agent_id: str | None = None
    capabilities: tuple[str, ...] = ()
    context: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True)
class EffectInterpretation:
    """How LoopX routed it: lane, obligation, interaction mode, gate, cadence."""

    route: str
    obligation: str
    interaction_mode: str
    capability_action: str | None = None
    cadence_class: str | None = None


@dataclass(frozen=True)
class EffectObservation:
    """What came back to the model."""

    decision: str
    should_run: bool
    effective_action: str
    recommended_action: str
    action_portfolio: Mapping[str, Any] | None = None
    """The actions open to the agent now (should-run: the todos it could take), when the packet has them."""
    planning_horizon: Mapping[str, Any] | None = None
    """How far ahead the agent may plan (should-run: the slots and minutes left in the window)."""
    protocol_summary: str | None = None


@dataclass(frozen=True)
class EffectNext:
    """The data-encoded handler: what the host runs next, and how it settles success or failure."""

    cli_actions: tuple[str, ...] = ()
    execution_mode: ExecutionMode | None = None
    program: EffectProgram | None = None
    """The ordered effect program (its steps and `execution_mode`) when the packet declares one."""
    scheduler_action: str | None = None
    cadence_class: str | None = None
    ack_cli_args: tuple[str, ...] = ()
    failure_cli_args: tuple[str, ...] = ()


@dataclass(frozen=True)
class EffectTurn:
    """One packet seen through all four slots."""

    request: EffectRequest
    interpretation: EffectInterpretation
    observation: EffectObservation
    next_effect: EffectNext


def _hints(scheduler: Mapping[str, Any], name: str) -> tuple[str, ...]:
    """The first host hint `name` (ack_hint / failure_hint) a plugin contributed."""
    for value in scheduler.values():
        if isinstance(value, Mapping) and isinstance(value.get(name), Mapping):
            return tuple(value[name].get("cli_args") or ())
    return ()


def interpret_quota_should_run_packet(packet: Mapping[str, Any]) -> EffectTurn:
    """The should-run packet through the four slots."""
    lane = packet.get("work_lane_contract") or {}
    interaction = packet.get("interaction_contract") or {}
    scheduler = packet.get("scheduler_hint") or {}
    gate = packet.get("capability_gate") or {}
    cli = interaction.get("cli_channel") or {}
    actions = tuple(cli.get("next_cli_actions") or ())
    return EffectTurn(
        request=EffectRequest(
            kind="quota_should_run",
            source=packet.get("surface") or "cli",
            goal_id=packet.get("goal_id"),
            agent_id=packet.get("agent_id"),
            context=MappingProxyType({"quota_state": (packet.get("quota") or {}).get("state")}),
        ),
        interpretation=EffectInterpretation(
            route=lane.get("lane", "workspace"),
            obligation=lane.get("obligation", "none"),
            interaction_mode=interaction.get("mode", "quiet"),
            capability_action=gate.get("action"),
            cadence_class=scheduler.get("cadence_class"),
        ),
        observation=EffectObservation(
            decision=packet["decision"],
            should_run=bool(packet["should_run"]),
            effective_action=packet["effective_action"],
            recommended_action=packet["recommended_action"],
            action_portfolio=_frozen(packet.get("action_portfolio")),
            planning_horizon=_frozen(packet.get("planning_horizon")),
            protocol_summary=(packet.get("protocol_action_packet") or {}).get("summary"),
        ),
        next_effect=EffectNext(
            cli_actions=actions,
            execution_mode=declared_mode(cli.get("execution_mode")),
            program=_cli_program(actions, cli.get("execution_mode")),
            scheduler_action=scheduler.get("action"),
            cadence_class=scheduler.get("cadence_class"),
            ack_cli_args=_hints(scheduler, "ack_hint"),
            failure_cli_args=_hints(scheduler, "failure_hint"),
        ),
    )


def interpret_turn_result_packet(packet: Mapping[str, Any]) -> EffectTurn:
    """A `loopx_turn_result_v0` packet through the four slots; its serial program (the phases the
    turn still needs) is what the turn driver executes."""
    status = packet["status"]
    failure = packet.get("failure")
    decision = {"open": "continue", "committed": "settled"}.get(status, status)
    if failure:
        decision = "refused" if status == "open" else decision
    actions = tuple(packet.get("next_cli_actions") or ())
    return EffectTurn(
        request=EffectRequest(
            kind="turn_result",
            source=packet.get("adapter", "cli"),
            goal_id=packet.get("goal_id"),
            agent_id=packet.get("agent_id"),
            context=MappingProxyType(
                {
                    "turn_key": packet.get("turn_key"),
                    "next_phase": packet.get("next_phase"),
                    "completed_phases": tuple(packet.get("completed_phases") or ()),
                    "failure_kind": failure.get("kind") if failure else None,
                }
            ),
        ),
        interpretation=EffectInterpretation(
            route="settlement", obligation=packet.get("next_phase") or "none", interaction_mode="autonomous"
        ),
        observation=EffectObservation(
            decision=decision,
            should_run=False,
            effective_action=packet.get("next_phase") or ("settled" if status == "committed" else status),
            recommended_action=packet.get("summary", ""),
        ),
        next_effect=EffectNext(
            cli_actions=actions,
            execution_mode=declared_mode(packet.get("execution_mode")),
            program=_phase_program(packet),
        ),
    )


def _frozen(section: Any) -> Mapping[str, Any] | None:
    return MappingProxyType(dict(section)) if isinstance(section, Mapping) else None


def _cli_program(actions: tuple[str, ...], mode: object) -> EffectProgram | None:
    """The should-run program: its CLI actions, in order, as the packet declares them run."""
    if not actions or declared_mode(mode) is None:
        return None
    return effect_program_from_ordered_steps(actions, declared_mode(mode))


def _phase_program(packet: Mapping[str, Any]) -> EffectProgram | None:
    """The turn result program: the phases the turn still needs, one step each (the driver runs it)."""
    mode = declared_mode(packet.get("execution_mode"))
    phases = packet.get("remaining_phases")
    if mode is None or not isinstance(phases, list) or not phases:
        return None
    return EffectProgram(
        tuple(EffectStep(str(p), "phase", purpose=PHASE_PURPOSE.get(p)) for p in phases), mode
    )


def interpret_turn_journal(journal: Any, *, goal_id: str, agent_id: str, turn_key: str) -> EffectTurn:
    """A turn journal through the lens: identity, order and status checks as typed violations.

    Never raises on a semantic mismatch: it returns a blocked observation. Grants nothing:
    `should_run` is False and the next effect is empty.
    """

    violations: list[str] = []
    identity = journal.identity or {}
    goal_ok = journal.goal_id == goal_id and identity.get("goal_id") == goal_id
    owner_ok = journal.agent_id == agent_id and identity.get("agent_id") == agent_id
    try:
        digest_key = SettlementIdentity(**identity).turn_key  # type: ignore[arg-type]
    except Exception:  # a malformed identity is a mismatch, reported as such
        digest_key = None
    key_ok = journal.turn_key == turn_key and digest_key == turn_key
    raw = [p.phase for p in journal.phases]
    known = [p for p in raw if p in PHASES]
    prefix_ok = raw == list(PHASES[: len(raw)])
    status = journal.status if journal.status in STATUSES else "unsupported"
    if not goal_ok:
        violations.append("goal_mismatch")
    if not owner_ok:
        violations.append("owner_mismatch")
    if not key_ok:
        violations.append("turn_key_mismatch")
    if len(known) != len(raw):
        violations.append("unknown_phase")
    if not prefix_ok:
        violations.append("phases_not_ordered_prefix")
    if status == "unsupported":
        violations.append("unsupported_status")
    elif status == "stopped":
        violations.append("turn_stopped")
    legal = not violations
    context = {
        "journal_status": status,
        "replay_legal": legal,
        "goal_matches": goal_ok,
        "owner_matches": owner_ok,
        "turn_key_matches": key_ok,
        "phases_form_ordered_prefix": prefix_ok,
        "completed_phases": tuple(known),
        "tombstone_retained": status in TOMBSTONES,
        "violations": tuple(violations),
    }
    return EffectTurn(
        request=EffectRequest(
            kind="turn_journal",
            source="journal",
            goal_id=goal_id,
            agent_id=agent_id,
            context=MappingProxyType(context),
        ),
        interpretation=EffectInterpretation(route="inspection", obligation="none", interaction_mode="quiet"),
        observation=EffectObservation(
            decision="replay_legal" if legal else "replay_blocked",
            should_run=False,
            effective_action="none",
            recommended_action="",
        ),
        next_effect=EffectNext(),
    )
