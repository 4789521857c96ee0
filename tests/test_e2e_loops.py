"""End-to-end loops with real processes: each host's protocol drives a goal to done, exactly once.

A scripted host replays heartbeats and executes exactly what LoopX hands back (CLI actions
from the should-run packet, the Claude Stop hook's reason, the DSH listener's steering, or
MCP tool calls); a stand-in agent writes a file per todo.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from loopx_core.ops import gates, goals, todos
from loopx_core.store.files import FileStore
from tests import hostclis
from tests.conftest import LOOPX_BIN, T0, Cli
from tests.hostsim import Sim, claude_tick, codex_tick, dsh_tick

PROTOCOLS = ["codex-app", "claude-code", "dsh"]


def make(
    root: Path, titles: list[tuple[str, int]], *, compute: float = 1.0, agents: tuple[str, ...] = ("builder",)
) -> Sim:
    root.mkdir(parents=True, exist_ok=True)
    store = FileStore(root)
    store.init()
    goals.add_goal(store, "g", "Ship it", T0, compute=compute)
    for agent in agents:
        goals.register_agent(store, agent, ["python"], T0)
    for title, priority in titles:
        todos.add_todo(store, "g", title, T0, priority=priority)
    return Sim(root)


@pytest.fixture
def ticker(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """A function running one heartbeat of the parametrized protocol; returns whether work ran."""
    protocol = request.param

    def tick(sim: Sim, agent: str = "builder", **kw: Any) -> bool:
        before = len(sim.worked) + len(sim.commands)
        if protocol == "codex-app":
            codex_tick(sim, agent, **kw)
        elif protocol == "claude-code":
            claude_tick(sim, agent, **kw)
        else:
            node = hostclis.NODE22 / "node"
            hostclis.require("dsh")
            package = sim.root / ".dsh/plugins/loopx-dsh"
            if not package.exists():
                cli = Cli(sim.root, monkeypatch)
                args = [
                    "workflow-skills",
                    "--install",
                    "--surface",
                    "dsh",
                    "--target",
                    str(sim.root),
                    "-g",
                    "g",
                    "-a",
                    agent,
                    "--loopx-command",
                    str(LOOPX_BIN),
                ]
                assert cli(*args).exit_code == 0
            dsh_tick(sim, node, package, **kw)
        return len(sim.worked) + len(sim.commands) > before

    tick.protocol = protocol  # type: ignore[attr-defined]
    return tick


def run_until_idle(sim: Sim, tick, limit: int = 12, **kw: Any) -> int:  # type: ignore[no-untyped-def]
    ticks = 0
    while ticks < limit and tick(sim, **kw):
        ticks += 1
    return ticks


@pytest.mark.parametrize("ticker", PROTOCOLS, indirect=True)
def test_todos_done_in_priority_order_each_turn_charged_once(tmp_path: Path, ticker) -> None:  # type: ignore[no-untyped-def]
    sim = make(tmp_path / "p", [("Polish", 3), ("Parse", 1), ("Lex", 0), ("Test", 2)])
    ticks = run_until_idle(sim, ticker)
    assert ticks == 4
    assert [todo for _, todo in sim.worked] == ["t3", "t2", "t4", "t1"]
    assert set(sim.todos().values()) == {"done"}
    spends = sim.spends()
    assert len(spends) == 4 and len({s["turn_instance_id"] for s in spends}) == 4
    assert len(sim.runs()) == 4
    registry = json.loads((sim.root / ".loopx/registry.json").read_text())
    assert registry["goals"]["g"]["status"] == "done"  # the last turn closed the goal
    assert sim.should_run("builder")["quota"]["state"] == "paused"
    assert all((sim.root / "src" / f"{t}.py").exists() for t in ("t1", "t2", "t3", "t4"))


@pytest.mark.parametrize("ticker", PROTOCOLS, indirect=True)
def test_stops_when_throttled_paused_or_gated_and_resumes(tmp_path: Path, ticker) -> None:  # type: ignore[no-untyped-def]
    sim = make(tmp_path / "p", [(f"Todo {n}", n) for n in range(6)], compute=2 / 1440)  # 2 slots a day
    assert run_until_idle(sim, ticker) == 2
    assert sim.should_run("builder")["quota"]["state"] == "throttled"
    assert not ticker(sim)
    store = FileStore(sim.root)
    goals.configure_goal(store, "g", T0, compute=1.0)
    assert ticker(sim)
    goals.set_goal_status(store, "g", "stopped", T0)
    assert not ticker(sim) and sim.should_run("builder")["quota"]["state"] == "paused"
    goals.set_goal_status(store, "g", "active", T0)
    assert ticker(sim)
    gates.open_gate(store, "g", "Approve the API change", T0, gate_id="api")
    assert not ticker(sim) and sim.should_run("builder")["quota"]["state"] == "operator_gate"
    gates.resolve_gate(store, "g", "api", T0, resolution="approved")
    assert ticker(sim)
    assert len(sim.worked) == 5 == len(sim.spends())
    assert Counter(s["turn_instance_id"] for s in sim.spends()).most_common(1)[0][1] == 1


@pytest.mark.parametrize("ticker", PROTOCOLS[:2], indirect=True)
def test_two_agents_never_take_the_same_todo(tmp_path: Path, ticker) -> None:  # type: ignore[no-untyped-def]
    sim = make(tmp_path / "p", [(f"Todo {n}", n % 3) for n in range(6)], agents=("builder", "reviewer"))
    sim.execute(
        "builder",
        sim.should_run("builder")["interaction_contract"]["cli_channel"]["next_cli_actions"],
        stop_after="turn",
    )
    for _ in range(8):
        ticker(sim, "reviewer")
        ticker(sim, "builder")
    worked = [todo for _, todo in sim.worked]
    assert sorted(set(worked)) == [f"t{n}" for n in range(1, 7)]
    assert Counter(worked).most_common(1)[0][1] == 1, sim.worked
    assert {agent for agent, _ in sim.worked} == {"builder", "reviewer"}
    assert len(sim.spends()) == 6 and len({s["turn_instance_id"] for s in sim.spends()}) == 6


@pytest.mark.parametrize("ticker", PROTOCOLS, indirect=True)
@pytest.mark.parametrize("crash", ["writeback", "quota"])
def test_crash_mid_turn_recovers_without_double_spend(tmp_path: Path, ticker, crash: str) -> None:  # type: ignore[no-untyped-def]
    sim = make(tmp_path / "p", [("One", 0), ("Two", 1)])
    ticker(sim, stop_after=crash)  # the host dies right after this command
    run_until_idle(sim, ticker)
    assert set(sim.todos().values()) == {"done"}
    per_turn = Counter(s["turn_instance_id"] for s in sim.spends())
    assert set(per_turn.values()) == {1}
    journals = list((sim.root / ".loopx/goals/g/turns").glob("*.json"))
    assert len(journals) == len(per_turn) == len(sim.runs())
