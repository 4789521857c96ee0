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


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_packet(project: Project, name: str, snapshot_json) -> None:
    packet = packet_for(project, name)
    expected_state = name.split("_")[0] if not name.startswith(("capability", "replan")) else None
    if name.startswith(("blocked_health", "operator_gate", "focus_wait")):
        expected_state = "_".join(name.split("_")[:2])
    if expected_state:
        assert packet["quota"]["state"] == expected_state
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
