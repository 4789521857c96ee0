"""The should-run packet over the scenario matrix, pinned by JSON snapshots."""

from __future__ import annotations

import pytest

from loopx_core.decide.packet import build_packet, load_inputs
from loopx_core.quota import EVALUATION_ORDER
from loopx_core.render import packet_markdown
from tests.conftest import Project
from tests.scenarios import SCENARIOS


def packet_for(project: Project, name: str) -> dict:
    ask = SCENARIOS[name](project)
    inputs = load_inputs(
        project.store, "g", ask.agent_id, project.at(ask.minutes), available_capabilities=ask.available
    )
    return build_packet(inputs)


# scenario: (state, decision, lane, effective_action, mode, owner must act, agent must attempt,
#            selected todo, capability gate action)
EXPECTED: dict[str, tuple[str, str, str, str, str, bool, bool, str | None, str | None]] = {
    "blocked_health_corrupt_state": (
        "blocked_health",
        "repair",
        "inbox",
        "repair_state",
        "owner_gate",
        True,
        False,
        None,
        None,
    ),
    "blocked_health_high_finding": (
        "blocked_health",
        "repair",
        "inbox",
        "repair_state",
        "owner_gate",
        True,
        False,
        None,
        None,
    ),
    "capability_ask_owner": (
        "eligible",
        "skip",
        "workspace",
        "ask_owner",
        "owner_gate",
        True,
        False,
        "t1",
        "ask_owner",
    ),
    "capability_prefers_capable_todo": (
        "eligible",
        "run",
        "workspace",
        "work_todo",
        "autonomous",
        False,
        True,
        "t2",
        None,
    ),
    "capability_repair_bridge": (
        "eligible",
        "repair",
        "workspace",
        "repair_bridge",
        "autonomous",
        False,
        True,
        "t1",
        "repair_bridge",
    ),
    "capability_unsupported": (
        "eligible",
        "skip",
        "workspace",
        "unsupported",
        "quiet",
        False,
        False,
        "t1",
        "unsupported",
    ),
    "eligible_after_void": (
        "eligible",
        "run",
        "workspace",
        "work_todo",
        "autonomous",
        False,
        True,
        "t1",
        None,
    ),
    "eligible_blocks_agent_narrows_scope": (
        "eligible",
        "run",
        "workspace",
        "work_todo",
        "autonomous",
        False,
        True,
        "t2",
        None,
    ),
    "eligible_expired_lease_taken_over": (
        "eligible",
        "run",
        "workspace",
        "work_todo",
        "autonomous",
        False,
        True,
        "t1",
        None,
    ),
    "eligible_gate_blocks_other_agent": (
        "eligible",
        "run",
        "workspace",
        "work_todo",
        "autonomous",
        False,
        True,
        "t1",
        None,
    ),
    "eligible_lease_held": (
        "eligible",
        "run",
        "workspace",
        "work_todo",
        "autonomous",
        False,
        True,
        "t1",
        None,
    ),
    "eligible_workspace": (
        "eligible",
        "run",
        "workspace",
        "work_todo",
        "autonomous",
        False,
        True,
        "t1",
        None,
    ),
    "focus_wait_monitor_due": (
        "focus_wait",
        "observe",
        "monitor",
        "poll_evidence",
        "monitor",
        False,
        True,
        None,
        None,
    ),
    "focus_wait_not_due": ("focus_wait", "skip", "monitor", "wait_focus", "quiet", False, False, None, None),
    "operator_gate_open_gate": (
        "operator_gate",
        "skip",
        "inbox",
        "await_operator",
        "owner_gate",
        True,
        False,
        None,
        None,
    ),
    "operator_gate_user_todo_blocks_agent": (
        "operator_gate",
        "skip",
        "inbox",
        "await_operator",
        "owner_gate",
        True,
        False,
        None,
        None,
    ),
    "paused_compute_zero": ("paused", "skip", "workspace", "pause", "quiet", False, False, None, None),
    "paused_goal_stopped": ("paused", "skip", "workspace", "pause", "quiet", False, False, None, None),
    "replan_frontier_empty": ("eligible", "run", "replan", "replan", "autonomous", False, True, None, None),
    "throttled": ("throttled", "skip", "workspace", "wait_quota", "quiet", False, False, None, None),
    "waiting_bound_to_other": ("waiting", "skip", "workspace", "wait", "quiet", False, False, None, None),
    "waiting_claimed_by_other": ("waiting", "skip", "workspace", "wait", "quiet", False, False, None, None),
    "waiting_excluded": ("waiting", "skip", "workspace", "wait", "quiet", False, False, None, None),
    "waiting_monitor_only": ("waiting", "skip", "monitor", "wait", "quiet", False, False, None, None),
    "focus_wait_monitor_only_polls": (
        "focus_wait",
        "observe",
        "monitor",
        "poll_evidence",
        "monitor",
        False,
        True,
        None,
        None,
    ),
    "waiting_not_due": ("waiting", "skip", "workspace", "wait", "quiet", False, False, None, None),
}


def semantics(packet: dict) -> tuple:  # type: ignore[type-arg]
    """The facts a host acts on, read from the packet."""
    contract = packet["interaction_contract"]
    selected = packet.get("selected_todo")
    return (
        packet["quota"]["state"],
        packet["decision"],
        packet["work_lane_contract"]["lane"],
        packet["effective_action"],
        contract["mode"],
        contract["user_channel"]["action_required"],
        contract["agent_channel"]["must_attempt"],
        selected["todo_id"] if selected else None,
        packet.get("capability_gate", {}).get("action"),
    )


def test_every_scenario_has_expected_semantics() -> None:
    assert set(EXPECTED) == set(SCENARIOS)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_packet(project: Project, name: str, snapshot_json) -> None:
    packet = packet_for(project, name)
    assert semantics(packet) == EXPECTED[name]
    assert packet["should_run"] is (packet["decision"] in ("run", "observe", "repair") and EXPECTED[name][6])
    actions = packet["interaction_contract"]["cli_channel"]["next_cli_actions"]
    assert all(a.startswith("loopx ") for a in actions)
    if packet["decision"] == "run" and packet["effective_action"] == "work_todo":
        assert [a.split()[1:3] for a in actions] == [
            ["turn", "begin"],
            ["writeback", "--goal-id"],
            ["quota", "spend"],
            ["todo", "complete"],
        ]
        assert packet["settlement_plan"]["identity"]["todo_id"] == EXPECTED[name][7]
    assert packet == snapshot_json


MARKDOWN = [
    "eligible_workspace",
    "throttled",
    "capability_ask_owner",
    "focus_wait_monitor_due",
    "operator_gate_open_gate",
]


@pytest.mark.parametrize("name", MARKDOWN)
def test_markdown(project: Project, name: str, snapshot_md) -> None:
    assert packet_markdown(packet_for(project, name)) == snapshot_md


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_markdown_says_what_the_packet_says(project: Project, name: str) -> None:
    packet = packet_for(project, name)
    text = packet_markdown(packet)
    assert f"should-run: {packet['decision'].upper()} (goal `g`" in text
    for fact in (
        packet["quota"]["state"],
        packet["effective_action"],
        packet["reason"],
        packet["recommended_action"],
    ):
        assert fact in text, fact
    for action in packet["interaction_contract"]["cli_channel"]["next_cli_actions"]:
        assert action in text, action
    if packet.get("selected_todo"):
        assert packet["selected_todo"]["todo_id"] in text


def test_matrix_covers_every_state_lane_gate_and_agent_field(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    from loopx_core.store.files import FileStore

    states, lanes, gates, decisions = set(), set(), set(), set()
    for name in SCENARIOS:
        root = tmp_path_factory.mktemp(name)
        store = FileStore(root)
        store.init()
        packet = packet_for(Project(root, store), name)
        states.add(packet["quota"]["state"])
        lanes.add(packet["work_lane_contract"]["lane"])
        decisions.add(packet["decision"])
        if "capability_gate" in packet:
            gates.add(packet["capability_gate"]["action"])
    assert states == set(EVALUATION_ORDER)
    assert lanes == {"inbox", "workspace", "replan", "monitor"}
    assert gates == {"ask_owner", "repair_bridge", "unsupported"}
    assert decisions == {"run", "skip", "observe", "repair"}
    names = " ".join(SCENARIOS)
    for field in ("claimed_by_other", "bound_to_other", "excluded", "blocks_agent"):
        assert field in names, field
