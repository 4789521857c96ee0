"""The effect lens: packets read through four frozen slots; interpretation grants nothing."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.decide.packet import build_packet, load_inputs
from loopx_core.effects.lens import (
    EffectNext,
    effect_program_from_ordered_steps,
    interpret_quota_should_run_packet,
    interpret_turn_journal,
    interpret_turn_result_packet,
)
from loopx_core.kernel.results import turn_result
from loopx_core.models.constants import PHASES, STATUSES
from loopx_core.render import packet_markdown
from tests.conftest import Project
from tests.scenarios import SCENARIOS
from tests.turns import begun_turn


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_should_run_packet_through_the_lens(project: Project, name: str) -> None:
    ask = SCENARIOS[name](project)
    packet = build_packet(
        load_inputs(
            project.store, "g", ask.agent_id, project.at(ask.minutes), available_capabilities=ask.available
        )
    )
    turn = interpret_quota_should_run_packet(packet)
    assert (turn.observation.decision, turn.observation.should_run) == (
        packet["decision"],
        packet["should_run"],
    )
    assert turn.observation.effective_action == packet["effective_action"]
    assert turn.interpretation.route == packet["work_lane_contract"]["lane"]
    assert turn.interpretation.interaction_mode == packet["interaction_contract"]["mode"]
    assert turn.interpretation.capability_action == (packet.get("capability_gate") or {}).get("action")
    actions = tuple(packet["interaction_contract"]["cli_channel"]["next_cli_actions"])
    assert turn.next_effect.cli_actions == actions
    declared = packet["interaction_contract"]["cli_channel"].get("execution_mode")
    assert turn.next_effect.execution_mode == declared == ("serial" if actions else None)
    program = turn.next_effect.program
    assert (program is None) == (not actions)
    if program is not None:  # lossless: the program is the actions, in order, in the declared mode
        assert tuple(s.command for s in program.steps) == actions
        assert program.execution_mode == declared
    for name in ("action_portfolio", "planning_horizon"):
        assert getattr(turn.observation, name) == packet.get(name)
    assert turn.next_effect.scheduler_action == packet["scheduler_hint"]["action"]
    for action in actions:  # the Markdown a person reads is rendered from EffectNext
        assert f"`{action}`" in packet_markdown(packet)


def test_slots_are_frozen(project: Project) -> None:
    ask = SCENARIOS["eligible_workspace"](project)
    turn = interpret_quota_should_run_packet(
        build_packet(load_inputs(project.store, "g", ask.agent_id, project.at(0)))
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        turn.observation.should_run = False  # type: ignore[misc]
    with pytest.raises(TypeError):
        turn.request.context["x"] = 1  # type: ignore[index]


def test_host_hints_reach_next_effect() -> None:
    packet = {
        "decision": "run",
        "should_run": True,
        "effective_action": "work_todo",
        "recommended_action": "x",
        "scheduler_hint": {
            "action": "keep",
            "codex_app": {
                "ack_hint": {"cli_args": ["quota", "scheduler-ack"]},
                "failure_hint": {"cli_args": ["quota", "scheduler-fail"]},
            },
        },
    }
    nxt = interpret_quota_should_run_packet(packet).next_effect
    assert (nxt.ack_cli_args, nxt.failure_cli_args) == (
        ("quota", "scheduler-ack"),
        ("quota", "scheduler-fail"),
    )


def test_turn_result_packet(tmp_path) -> None:  # type: ignore[no-untyped-def]
    turn = begun_turn(tmp_path)
    packet = turn_result(turn.store.read_journal("g", turn.key))
    lens = interpret_turn_result_packet(packet)
    assert lens.request.context["next_phase"] == "host_execute"
    assert lens.observation.decision == "continue" and lens.observation.should_run is False
    assert lens.next_effect.cli_actions[0].startswith("loopx writeback")
    refused = interpret_turn_result_packet(
        {**packet, "failure": {"kind": "cancelled", "step": "x", "message": ""}}
    )
    assert (
        refused.observation.decision == "refused" and refused.request.context["failure_kind"] == "cancelled"
    )
    settled = interpret_turn_result_packet(
        {**packet, "status": "committed", "next_phase": None, "next_cli_actions": [], "remaining_phases": []}
        | {"execution_mode": None}
    )
    assert settled.observation.decision == "settled" and settled.next_effect == EffectNext()


def test_ordered_program() -> None:
    program = effect_program_from_ordered_steps(
        [{"step_id": "a", "kind": "validation", "purpose": "check"}, "loopx quota spend -g g"], "serial"
    )
    assert program.execution_mode == "serial"
    assert [(s.step_id, s.kind, s.command) for s in program.steps] == [
        ("a", "validation", None),
        ("s2", "cli", "loopx quota spend -g g"),
    ]


def test_journal_interpretation_grants_no_authority(tmp_path) -> None:  # type: ignore[no-untyped-def]
    turn = begun_turn(tmp_path)
    journal = turn.store.read_journal("g", turn.key)
    lens = interpret_turn_journal(journal, goal_id="g", agent_id="builder", turn_key=turn.key)
    assert lens.observation.should_run is False and lens.next_effect == EffectNext()
    assert lens.request.context["replay_legal"] is True
    other = interpret_turn_journal(journal, goal_id="g", agent_id="intruder", turn_key=turn.key)
    assert other.observation.decision == "replay_blocked" and other.request.context["violations"] == (
        "owner_mismatch",
    )


def test_a_declared_execution_mode_is_read_and_an_unknown_one_is_not_invented() -> None:
    base = {"decision": "run", "should_run": True, "effective_action": "work_todo", "recommended_action": "x"}
    for declared, read in (("parallel", "parallel"), ("serial", "serial"), ("bogus", None), (None, None)):
        cli = {"next_cli_actions": ["loopx a", "loopx b"], "execution_mode": declared}
        packet = {**base, "interaction_contract": {"cli_channel": cli}}
        nxt = interpret_quota_should_run_packet(packet).next_effect
        assert nxt.execution_mode == read
        assert (nxt.program.execution_mode if nxt.program else None) == read


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(done=st.integers(0, 6), status=st.sampled_from(STATUSES), closeout=st.booleans())
def test_turn_result_program_is_the_remaining_phases(tmp_path_factory, done, status, closeout) -> None:  # type: ignore[no-untyped-def]
    """Lossless for the turn result family: the program is the phases still to do, serial, in
    order; its first step is `next_phase`; a settled or stopped turn has none."""
    turn = begun_turn(tmp_path_factory.mktemp("t"))
    journal = turn.store.read_journal("g", turn.key)
    if closeout and "terminal_closeout" not in journal.plan:
        journal.plan = [*journal.plan, "terminal_closeout"]
    wanted = [p for p in PHASES if p in ("host_execute", "typed_result", *journal.plan)]
    for phase in wanted[:done]:
        journal.record(phase, journal.updated_at, {})
    journal.status = status
    packet = turn_result(journal)
    lens = interpret_turn_result_packet(packet)
    remaining = wanted[done:] if status in ("open", "failed") else []
    assert packet["remaining_phases"] == remaining
    assert packet["next_phase"] == (remaining[0] if remaining else None)
    program = lens.next_effect.program
    if not remaining:
        assert program is None and "execution_mode" not in packet
        return
    assert program is not None and program.execution_mode == "serial" == lens.next_effect.execution_mode
    assert [(s.step_id, s.kind) for s in program.steps] == [(p, "phase") for p in remaining]
    assert all(s.purpose for s in program.steps)
    assert lens.request.context["next_phase"] == program.steps[0].step_id
    assert lens.next_effect.cli_actions == tuple(packet["next_cli_actions"])


@settings(max_examples=30, deadline=None)
@given(
    todos=st.lists(
        st.tuples(st.integers(0, 4), st.sampled_from(((), ("python",), ("gpu",)))), min_size=1, max_size=8
    ),
    has=st.sampled_from(((), ("python",), ("python", "gpu"))),
)
def test_the_portfolio_lists_todos_in_the_order_the_agent_takes_them(tmp_path_factory, todos, has) -> None:  # type: ignore[no-untyped-def]
    from loopx_core.ops import goals
    from loopx_core.ops import todos as todo_ops
    from loopx_core.store.files import FileStore
    from tests.conftest import T0

    store = FileStore(tmp_path_factory.mktemp("p"))
    store.init()
    goals.add_goal(store, "g", "Objective", T0)
    goals.register_agent(store, "a", list(has), T0)
    for n, (priority, needs) in enumerate(todos):
        todo_ops.add_todo(store, "g", f"T{n}", T0, priority=priority, required_capabilities=list(needs))
    packet = build_packet(load_inputs(store, "g", "a", T0))
    portfolio = packet["action_portfolio"]
    listed = [t["todo_id"] for t in portfolio["todos"]]
    assert listed[0] == packet["selected_todo"]["todo_id"]
    assert len(listed) + portfolio["more"] == len(todos) and len(listed) == min(5, len(todos))
    capable = [not set(t.get("required_capabilities", ())) <= set(has) for t in portfolio["todos"][1:]]
    assert capable == sorted(capable)  # every todo it can do before any it cannot
    assert interpret_quota_should_run_packet(packet).observation.action_portfolio == portfolio
