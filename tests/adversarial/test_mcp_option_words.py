"""Class: an MCP refusal names what the client sent (the tool's arguments), not the CLI's options.

Observed: the operations' messages are written for the CLI, so a tool client that sent
`title: ""` read "a todo needs a non-empty --title", `turn_begin` without a todo read
"exactly one of --todo-id or --replan", a bad key "invalid --turn-key"; and `focus_wait`
without `for_minutes` read "give exactly one of --until or --for-minutes" though the tool
has no `until`. Now each `--option` that is one of the tool's arguments is named as the
argument (`title`, `todo_id or replan`), a quoted command (`` `loopx agent register
--agent-id a` ``) stays as written, and `for_minutes` is a required argument.
Generated: messages mixing options, argument names, quoted commands and other text.
"""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from mcp.client.session import ClientSession

from loopx_core.mcp.answers import ALIASES, in_tool_words
from tests.conftest import Project
from tests.mcpclient import Tools, with_server
from tests.mcpinputs import setup_turn

KEY = "sha256:" + "0" * 64
FLAG = re.compile(r"(?<![\w-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)(?![\w-])")
QUOTED = re.compile(r"(`[^`]*`)")

ARGUMENTS = ["goal_id", "todo_id", "title", "turn_key", "replan", "required_capabilities", "for_minutes"]
OPTIONS = ["goal-id", "todo-id", "title", "turn-key", "replan", "capability", "until", "resume", "x2-y"]
PIECES = st.one_of(
    st.sampled_from(OPTIONS).map(lambda o: f"--{o}"),
    st.sampled_from(OPTIONS).map(lambda o: f"`loopx turn cancel --{o} g`"),
    st.text(alphabet="abc -_,.:()'", max_size=8),
    st.sampled_from(["-", "--", "---x", "--Title", "--9", "a--title", "`", "``"]),
)


def _options(message: str) -> list[str]:
    """The options named outside quoted commands."""
    return [m[0] for part in QUOTED.split(message)[::2] for m in FLAG.finditer(part)]


def _named_arguments(message: str, arguments: list[str]) -> list[str]:
    """The options outside quoted commands that are one of `arguments` under another name."""
    return [o for o in _options(message) if ALIASES.get(o[2:], o[2:].replace("-", "_")) in arguments]


@given(pieces=st.lists(PIECES, max_size=12), arguments=st.lists(st.sampled_from(ARGUMENTS), unique=True))
def test_options_become_argument_names_and_nothing_else_changes(
    pieces: list[str], arguments: list[str]
) -> None:
    message = "".join(pieces)
    shown = in_tool_words(message, arguments)
    assert _named_arguments(shown, arguments) == []
    assert QUOTED.findall(shown) == QUOTED.findall(message)  # a quoted command is left as written
    assert _options(shown) == [o for o in _options(message) if o not in _named_arguments(message, arguments)]
    assert in_tool_words(message, []) == message


REFUSALS: list[tuple[str, dict[str, Any], str]] = [
    ("todo_add", {"goal_id": "g", "title": " "}, "a todo needs a non-empty title"),
    ("gate_open", {"goal_id": "g", "title": ""}, "a gate needs a non-empty title"),
    ("focus_wait", {"goal_id": "g", "reason": "", "for_minutes": 5}, "a focus wait needs a reason"),
    ("focus_wait", {"goal_id": "g", "reason": "CI"}, "for_minutes: required argument is missing"),
    ("todo_update", {"goal_id": "g", "todo_id": "t2"}, "give title, priority, required_capabilities or"),
    ("todo_update", {"goal_id": "g", "todo_id": "t2", "title": ""}, "title must not be empty"),
    ("turn_begin", {"goal_id": "g", "agent_id": "other"}, "exactly one of todo_id or replan"),
    (
        "turn_begin",
        {"goal_id": "g", "agent_id": "ghost", "todo_id": "t2"},
        "`loopx agent register --agent-id",
    ),
    ("turn_cancel", {"goal_id": "g", "agent_id": "builder", "turn_key": "k"}, "invalid turn_key: expected"),
    ("turn_inspect_journal", {"goal_id": "g", "agent_id": "builder", "turn_key": "k"}, "invalid turn_key"),
    ("quota_should_run", {"goal_id": "nope", "agent_id": "builder"}, "`loopx goal add --goal-id nope"),
]


def test_refusals_through_the_server_name_the_tools_arguments(project: Project) -> None:
    setup_turn(project)

    async def body(session: ClientSession, tools: Tools) -> list[tuple[str, str, list[str]]]:
        listed = {t.name: list(t.input_schema["properties"]) for t in (await session.list_tools()).tools}
        answers = []
        for name, arguments, _ in REFUSALS:
            result = await session.call_tool(name, arguments)
            assert result.is_error, (name, arguments)
            answers.append((name, json.loads(result.content[0].text)["error"]["message"], listed[name]))  # type: ignore[union-attr]
        return answers

    for (name, message, arguments), (_, _, expected) in zip(
        with_server(project.root, body), REFUSALS, strict=True
    ):
        assert expected in message, (name, message)
        assert _named_arguments(message, arguments) == [], (name, message)
