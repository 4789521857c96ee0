"""The around layers: fixed order, short-circuits kept, each reporting in its own field."""

from __future__ import annotations

from loopx_core.decide.assess import assess
from loopx_core.decide.layers import AROUND_LAYERS, run_layers
from loopx_core.decide.packet import build_packet, load_inputs
from tests.conftest import Project
from tests.scenarios import SCENARIOS


def _inputs(project: Project, name: str):  # type: ignore[no-untyped-def]
    ask = SCENARIOS[name](project)
    return load_inputs(
        project.store, "g", ask.agent_id, project.at(ask.minutes), available_capabilities=ask.available
    )


def test_layer_order_is_the_contract() -> None:
    assert [name for name, _ in AROUND_LAYERS] == [
        "capability_gate",
        "interaction_contract",
        "work_lane_contract",
        "scheduler_hint",
    ]


def test_layers_run_once_each_in_order(project: Project) -> None:
    inputs = _inputs(project, "eligible_workspace")
    calls: list[str] = []

    def spy(name, layer):  # type: ignore[no-untyped-def]
        def wrapped(*args):  # type: ignore[no-untyped-def]
            calls.append(name)
            return layer(*args)

        return name, wrapped

    run_layers(inputs, assess(inputs), tuple(spy(n, f) for n, f in AROUND_LAYERS))
    assert calls == [name for name, _ in AROUND_LAYERS]


def test_gate_short_circuit_is_kept_by_later_layers(project: Project) -> None:
    inputs = _inputs(project, "capability_ask_owner")
    decision, fields = run_layers(inputs, assess(inputs))
    assert decision.short_circuit == "capability_gate"
    assert (decision.decision, decision.should_run, decision.next_cli_actions) == ("skip", False, ())
    assert fields["interaction_contract"]["mode"] == "owner_gate"
    assert fields["work_lane_contract"]["must_attempt_work"] is False
    assert "capability_gate" in fields["work_lane_contract"]["reason_codes"]
    assert fields["scheduler_hint"]["action"] == "slow"


def test_reordering_changes_what_is_observed(project: Project) -> None:
    """With the scheduler before the gate, the host would be told to keep a hot cadence."""
    inputs = _inputs(project, "capability_ask_owner")
    layers = dict(AROUND_LAYERS)
    wrong = (
        ("scheduler_hint", layers["scheduler_hint"]),
        ("interaction_contract", layers["interaction_contract"]),
        ("capability_gate", layers["capability_gate"]),
        ("work_lane_contract", layers["work_lane_contract"]),
    )
    _, right_fields = run_layers(inputs, assess(inputs))
    _, wrong_fields = run_layers(inputs, assess(inputs), wrong)
    assert right_fields["scheduler_hint"]["action"] == "slow"
    assert wrong_fields["scheduler_hint"]["action"] == "keep"
    assert wrong_fields["interaction_contract"]["mode"] == "autonomous"


def test_monitor_preemption_rewrites_and_says_so(project: Project) -> None:
    inputs = _inputs(project, "focus_wait_monitor_due")
    decision, fields = run_layers(inputs, assess(inputs))
    assert decision.short_circuit == "work_lane_contract"
    assert (decision.decision, decision.effective_action) == ("observe", "poll_evidence")
    assert fields["work_lane_contract"]["obligation"] == "poll_evidence"
    assert fields["interaction_contract"]["mode"] == "monitor"


def test_should_run_is_read_only(project: Project) -> None:
    ask = SCENARIOS["eligible_workspace"](project)
    before = {p: p.read_bytes() for p in project.root.rglob("*") if p.is_file()}
    build_packet(load_inputs(project.store, "g", ask.agent_id, project.at(0)))
    after = {p: p.read_bytes() for p in project.root.rglob("*") if p.is_file()}
    assert before == after


def test_settlement_identity_binds_todo_or_replan(project: Project) -> None:
    ask = SCENARIOS["replan_frontier_empty"](project)
    packet = build_packet(load_inputs(project.store, "g", ask.agent_id, project.at(ask.minutes)))
    identity = packet["settlement_plan"]["identity"]
    assert identity["todo_id"] is None and identity["replan_obligation_id"].startswith("replan-g-")
    assert packet["settlement_plan"]["turn_key"] == "sha256:" + packet["settlement_plan"]["effect_id"]
