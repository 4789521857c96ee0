"""Class: no MCP tool takes more text than its CLI twin could be given on a command line.

Observed: three `todo_add` calls with a 20-million-character title were stored (state.json
grew to 60 MB, with a 40 MB .prev beside it; every later command reads and rewrites it) and
each answer echoed the title back whole. The CLI cannot be given such a word (Linux passes
no command-line word over 131,072 bytes, and no command line over 2 MiB); the dashboard stops
a field at 2,000 characters.

Now a free-text argument (any that is not an id: ids keep their own "not a valid id") longer
than 131,072 characters, or more than 2,097,152 characters of text in one call, is one usage
error naming it; nothing is written, and the answer is short. Generated: every tool's free
text arguments, at the bound and past it, alone and many in one list.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.mcp.answers import MAX_ALL_TEXT, MAX_MESSAGE, MAX_TEXT
from loopx_core.mcp.server import build_server
from tests.conftest import Project
from tests.mcpinputs import assert_typed, files_of, setup_turn, tool_calls

LENGTHS = st.sampled_from([MAX_TEXT - 1, MAX_TEXT, MAX_TEXT + 1, 3 * MAX_TEXT])


def _free_text(server: Any, calls: dict[str, dict[str, Any]]) -> list[tuple[str, str, bool]]:
    """(tool, argument, holds a list) for every free-text argument a call of ours gives."""
    return sorted(
        (name, arg, isinstance(value, list))
        for name, arguments in calls.items()
        for arg, value in arguments.items()
        if arg in server._free_text[name] and isinstance(value, str | list)
    )


def _text_in(value: Any) -> int:
    """Characters of text in `value`: its strings, keys included, however deep."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(len(k) + _text_in(v) for k, v in value.items())
    if isinstance(value, list):
        return sum(_text_in(v) for v in value)
    return 0


def test_text_past_a_command_lines_bound_is_refused_and_writes_nothing(project: Project) -> None:
    turn_key = setup_turn(project)
    calls = tool_calls(turn_key)
    server = build_server(str(project.root))
    places = _free_text(server, calls)
    assert len(places) >= 15, places

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(place=st.sampled_from(places), length=LENGTHS, many=st.integers(min_value=1, max_value=20))
    def check(place: tuple[str, str, bool], length: int, many: int) -> None:
        name, arg, is_list = place
        text = "x" * length
        arguments = {**calls[name], arg: [text] * many if is_list else text}
        before = files_of(project.root)
        result = anyio.run(server.call_tool, name, arguments)
        body = result.content[0].text
        total = _text_in(arguments)  # every string of the call, argument names included
        if length > MAX_TEXT or total > MAX_ALL_TEXT:
            assert result.is_error, (name, arg, length, many)
            error = assert_typed(body)
            assert error["code"] == "usage" and "more than a command line carries" in error["message"], error
            assert (f"{arg}" if length > MAX_TEXT else "characters of text in all") in error["message"]
            assert len(body) < 2 * MAX_MESSAGE
            assert files_of(project.root) == before
        elif result.is_error:  # within the bound: whatever the tool says, it is not this refusal
            assert "more than a command line carries" not in json.loads(body)["error"]["message"]

    check()


def test_an_id_keeps_its_own_refusal(project: Project) -> None:
    setup_turn(project)
    server = build_server(str(project.root))
    result = anyio.run(server.call_tool, "todo_list", {"goal_id": "g" * (MAX_TEXT + 1)})
    message = json.loads(result.content[0].text)["error"]["message"]
    assert "goal_id: not a valid id" in message and "command line" not in message
