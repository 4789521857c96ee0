"""Class: concurrent tool calls in one MCP session settle exactly once.

The SDK runs each tool call in a worker thread, so one session's concurrent calls race
inside one process: 16 concurrent `quota_spend` calls for one turn once wrote two spend
events, and 12 concurrent `todo_claim` calls told up to 6 agents they held one lease. Here
each round fires them together through the SDK's own client against a real
`loopx mcp serve`, and the ledger and state files are read back independently.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
from mcp.client.session import ClientSession

from loopx_core.ops import goals, todos
from tests.conftest import T0, Project
from tests.mcpclient import Tools, with_server

ROUNDS = 5
SPENDS_PER_ROUND = 16
CLAIMS_PER_ROUND = 12
BUILDER = "builder"
CLAIMANTS = [f"agent-{n:02d}" for n in range(CLAIMS_PER_ROUND)]


def _setup(project: Project) -> None:
    goals.add_goal(project.store, "g", "Objective", T0)
    for agent in (BUILDER, *CLAIMANTS):
        goals.register_agent(project.store, agent, [], T0)
    for n in range(ROUNDS):
        todos.add_todo(project.store, "g", f"Turn {n}", T0, todo_id=f"turn-{n}")
        todos.add_todo(project.store, "g", f"Raced {n}", T0, todo_id=f"raced-{n}")


def _events(root: Path) -> list[dict[str, Any]]:
    path = root / ".loopx/goals/g/events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _todo(root: Path, todo_id: str) -> dict[str, Any]:
    state = json.loads((root / ".loopx/goals/g/state.json").read_text())
    return next(t for t in state["todos"] if t["todo_id"] == todo_id)


async def _together(tools: Tools, name: str, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every call of tool `name` (one per argument dict) in flight at once; the answers in order."""
    answers: list[dict[str, Any]] = [{} for _ in calls]

    async def one(i: int) -> None:
        answers[i] = await tools(name, **calls[i])

    async with anyio.create_task_group() as group:
        for i in range(len(calls)):
            group.start_soon(one, i)
    return answers


def test_concurrent_spends_and_claims_in_one_session(project: Project) -> None:
    _setup(project)
    root = project.root
    figures: dict[str, list[int]] = {"spend_events": [], "spend_ok": [], "holders": [], "conflicts": []}

    async def body(session: ClientSession, tools: Tools) -> None:
        for n in range(ROUNDS):
            ids = {"goal_id": "g", "agent_id": BUILDER}
            begun = await tools("turn_begin", **ids, todo_id=f"turn-{n}")
            key = begun["turn_key"]
            written = await tools(
                "writeback", **ids, turn_key=key, summary=f"round {n}", validation_status="passed"
            )
            assert written.get("next_phase") == "quota_spend", written
            before = len(_events(root)) if (root / ".loopx/goals/g/events.jsonl").exists() else 0

            spends = await _together(tools, "quota_spend", [{**ids, "turn_key": key}] * SPENDS_PER_ROUND)
            assert not [s for s in spends if "error" in s], spends
            events = _events(root)[before:]
            assert all(e.get("turn_key", key) == key for e in events), events
            figures["spend_events"].append(len(events))
            figures["spend_ok"].append(sum(1 for s in spends if s.get("status") == "committed"))
            assert len({e["event_id"] for e in events}) == len(events)

            raced = f"raced-{n}"
            claims = await _together(
                tools, "todo_claim", [{"goal_id": "g", "todo_id": raced, "agent_id": a} for a in CLAIMANTS]
            )
            winners = [c["claimed_by"] for c in claims if "error" not in c]
            codes = sorted({c["error"]["code"] for c in claims if "error" in c})
            assert codes in ([], ["conflict"]), claims
            figures["holders"].append(len(winners))
            figures["conflicts"].append(sum(1 for c in claims if "error" in c))
            assert [_todo(root, raced)["claimed_by"]] == winners

            done = await tools("todo_complete", **ids, todo_id=f"turn-{n}", evidence=["round"])
            assert done["status"] == "done", done

    with_server(root, body)
    print(
        f"\nMCP concurrency: rounds={ROUNDS}; quota_spend calls/round={SPENDS_PER_ROUND}, "
        f"spend events in the ledger per round={figures['spend_events']}, "
        f"committed answers={figures['spend_ok']}; todo_claim calls/round={CLAIMS_PER_ROUND}, "
        f"lease holders per round={figures['holders']}, conflicts={figures['conflicts']}"
    )
    assert figures["spend_events"] == [1] * ROUNDS
    assert figures["holders"] == [1] * ROUNDS
    assert figures["conflicts"] == [CLAIMS_PER_ROUND - 1] * ROUNDS
    assert len(_events(root)) == ROUNDS
