"""An agent that only speaks MCP can do everything a loop needs: replan, wait, gates, history, cancel."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcp.client.session import ClientSession

from tests.builders import build_project
from tests.mcpclient import Tools, with_server


async def _turn(tools: Tools, **begin: Any) -> str:
    begun = await tools("turn_begin", goal_id="g", agent_id="builder", **begin)
    return str(begun["turn_key"])


async def _settle(tools: Tools, key: str, **extra: Any) -> dict[str, Any]:
    written = await tools(
        "writeback",
        goal_id="g",
        agent_id="builder",
        turn_key=key,
        summary="s",
        validation_status="passed",
        **extra,
    )
    assert "error" not in written, written
    return await tools("quota_spend", goal_id="g", agent_id="builder", turn_key=key)


def test_a_replan_focus_wait_and_gate_through_tools_alone(tmp_path: Path) -> None:
    build_project(tmp_path, todo_count=0)

    async def body(session: ClientSession, tools: Tools) -> dict[str, Any]:
        packet = await tools("quota_should_run", goal_id="g", agent_id="builder")
        assert packet["effective_action"] == "replan"
        key = await _turn(tools, replan=True)
        added = await tools("todo_add", goal_id="g", title="Write the lexer", priority=1)
        rescoped = await tools(
            "todo_update", goal_id="g", todo_id=added["todo_id"], title="Write a small lexer"
        )
        assert rescoped["title"] == "Write a small lexer"
        assert (await _settle(tools, key))["status"] == "committed"
        waiting = await tools(
            "focus_wait", goal_id="g", reason="CI runs", for_minutes=60, poll_every_minutes=5
        )
        assert waiting["reason"] == "CI runs"
        assert (await tools("quota_should_run", goal_id="g", agent_id="builder"))["quota"][
            "state"
        ] == "focus_wait"
        await tools("focus_poll", goal_id="g")
        done = await tools("focus_done", goal_id="g", evidence="CI green")
        assert done["cleared"]["reason"] == "CI runs"
        gate = await tools("gate_open", goal_id="g", title="Approve the design")
        assert (await tools("quota_should_run", goal_id="g", agent_id="builder"))["quota"][
            "state"
        ] == "operator_gate"
        await tools("gate_resolve", goal_id="g", gate_id=gate["gate_id"], resolution="approved")
        key = await _turn(tools, todo_id=added["todo_id"])
        cancelled = await tools(
            "turn_cancel", goal_id="g", agent_id="builder", turn_key=key, reason="wrong approach"
        )
        assert cancelled["status"] == "stopped"
        key = await _turn(tools, todo_id=added["todo_id"])
        await _settle(tools, key)
        return await tools("history", goal_id="g")

    runs = with_server(tmp_path, body)["runs"]
    assert [(r["todo_id"], r["progress"]) for r in runs] == [("t1", "todo_worked"), (None, "todos_added")]
    events = [json.loads(x) for x in (tmp_path / ".loopx/goals/g/events.jsonl").read_text().splitlines()]
    assert len(events) == 2


def test_bad_arguments_to_the_new_tools_are_typed_usage_errors(tmp_path: Path) -> None:
    build_project(tmp_path)

    async def body(session: ClientSession, tools: Tools) -> list[dict[str, Any]]:
        return [
            await tools("todo_add", goal_id="g", title="x", priority=12),
            await tools("todo_update", goal_id="g", todo_id="t1"),
            await tools("focus_wait", goal_id="g", reason="r", for_minutes=float("inf")),
            await tools("gate_resolve", goal_id="g", gate_id="nope"),
            await tools("history", goal_id="g", limit=-1),
            await tools(
                "turn_cancel", goal_id="g", agent_id="builder", turn_key="sha256:" + "0" * 64, extra=1
            ),
        ]

    codes = [answer["error"]["exit_code"] for answer in with_server(tmp_path, body)]
    assert codes == [2, 2, 2, 3, 2, 2]
