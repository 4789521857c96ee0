"""Class: a client's cancellation never leaves a tool call done and unanswered.

Each tool call is one step of state. Told to cancel a call already running in its worker
thread, the SDK lets the step finish and answers nothing. The client cannot know it happened
and may do it again: five cancelled `todo_add` calls made five todos, with no answer. When stdin
closed, the server then waited five minutes for answers that would never come.

`mcp/transport.Lines` now ignores the cancellation of a tool call, which JSON-RPC allows for
what cannot be cancelled. Every call is answered with what it did. A cancelled request of
another kind goes on to the SDK and is not awaited at the end. Proved with generated batches:
calls that write or read, cancelled after they are sent, before, twice, or not at all. The
client then closes stdin at once.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import T0, Project
from tests.mcpinputs import RawServer

CALLS = {
    "todo_add": lambda n: {"goal_id": "g", "title": f"Task {n}"},
    "todo_list": lambda n: {"goal_id": "g"},
    "status": lambda n: {},
}
CANCELS = ("none", "after", "before", "twice", "other id")


def cancel(request_id: object) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": request_id, "reason": "x"},
    }


@pytest.mark.slow
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    batch=st.lists(
        st.tuples(st.sampled_from(sorted(CALLS)), st.sampled_from(CANCELS)), min_size=1, max_size=6
    )
)
def test_every_tool_call_is_answered_once_and_done_once_whatever_is_cancelled(
    project: Project, tmp_path_factory: Any, batch: list[tuple[str, str]]
) -> None:
    from loopx_core.ops import goals

    if "g" not in project.store.read_registry().goals:
        goals.add_goal(project.store, "g", "Objective", T0)
    before = len(project.store.read_goal("g").todos)
    server = RawServer(project.root, Path(tmp_path_factory.mktemp("err")) / "stderr.txt")
    sent: dict[int, str] = {}
    for n, (tool, how) in enumerate(batch, start=1):
        request_id = 1000 + n
        if how == "before":
            server.send(cancel(request_id))
        call = {"name": tool, "arguments": CALLS[tool](n)}
        server.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": call})
        sent[request_id] = tool
        if how in ("after", "twice"):
            server.send(cancel(request_id))
        if how == "twice":
            server.send(cancel(request_id))
        if how == "other id":
            server.send(cancel(f"x{request_id}"))
    started = time.monotonic()
    assert server.proc.stdin is not None and server.proc.stdout is not None
    server.proc.stdin.close()
    output = server.proc.stdout.read()
    assert server.proc.wait(timeout=30) == 0
    assert time.monotonic() - started < 20  # answered and gone, not waiting out the drain
    replies = [json.loads(line) for line in output.splitlines()]
    answered = [reply["id"] for reply in replies]
    assert sorted(answered) == sorted(sent)  # each call answered, once
    for reply in replies:
        assert "result" in reply and not reply["result"].get("isError"), reply
    added = sum(tool == "todo_add" for tool in sent.values())
    assert len(project.store.read_goal("g").todos) == before + added  # each write done once


def test_a_cancelled_request_of_another_kind_is_not_awaited_at_the_end(
    project: Project, tmp_path: Path
) -> None:
    """A `tools/list` cancelled while in flight: the SDK answers it or not; the server still
    leaves at once when stdin closes."""
    server = RawServer(project.root, tmp_path / "stderr.txt")
    for request_id in range(50, 55):
        server.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/list", "params": {}})
        server.send(cancel(request_id))
    started = time.monotonic()
    assert server.proc.stdin is not None and server.proc.stdout is not None
    server.proc.stdin.close()
    server.proc.stdout.read()
    assert server.proc.wait(timeout=30) == 0 and time.monotonic() - started < 20
