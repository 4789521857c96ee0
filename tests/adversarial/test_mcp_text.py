"""Class: MCP arguments that are not Unicode text are refused as such, before any tool runs.

Observed: a todo or gate title holding a lone surrogate (`"x\\udcffy"`, passed in-process
through the SDK's own client) went through the SDK's argument check (a str is a str) and
failed when the answer was written: `internal error ... PydanticSerializationError`. Over
stdio, a `\\udcff` escape was answered "not a valid JSON-RPC 2.0 message", and a line that
is not UTF-8 (`caf\\xe9`) was decoded with replacement characters and stored: the title on
disk was one the client never sent.

Now: in-process, a lone surrogate anywhere (a value, a list element, an argument name) is
one usage error naming where it is, for every tool, and so is a NUL (stored before: no command
line can carry one, and the dashboard refuses it); over stdio, a surrogate escape and a
non-UTF-8 line each get a JSON-RPC error carrying the request's id; nothing is written,
and the session goes on. Generated: every tool, a surrogate at a random place.
"""

from __future__ import annotations

import json
import re
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.client.client import Client

from loopx_core.mcp.answers import lone_surrogate
from loopx_core.mcp.server import build_server
from tests.conftest import Project
from tests.mcpclient import TOOLS
from tests.mcpinputs import RawServer, assert_typed, files_of, setup_turn, tool_calls

KEY = "sha256:" + "0" * 64
_SURROGATE = re.compile("[\ud800-\udfff]")


SURROGATES = st.integers(min_value=0xD800, max_value=0xDFFF).map(chr)
UNSENDABLE = st.one_of(SURROGATES, st.just("\x00"))


@st.composite
def spoiled(
    draw: st.DrawFn, calls: dict[str, dict[str, Any]], chars: st.SearchStrategy[str] = SURROGATES
) -> tuple[str, dict[str, Any], str]:
    """A tool, its arguments with one of `chars` put somewhere, and where (as the error names it)."""
    name = draw(st.sampled_from(sorted(calls)))
    arguments = json.loads(json.dumps(calls[name]))
    bad = draw(chars)
    places = [(k, None) for k, v in arguments.items() if isinstance(v, str)]
    places += [(k, i) for k, v in arguments.items() if isinstance(v, list) for i in range(len(v))]
    choice = draw(st.sampled_from([*places, ("an argument name", None)]))
    key, index = choice
    if key == "an argument name":
        around = st.text(st.characters(exclude_characters="\x00"), max_size=3)
        arguments[draw(around) + bad + draw(around)] = "x"
        return name, arguments, "an argument name"
    text = arguments[key] if index is None else arguments[key][index]
    at = draw(st.integers(min_value=0, max_value=len(text)))
    text = text[:at] + bad + text[at:]
    if index is None:
        arguments[key] = text
        return name, arguments, key
    arguments[key][index] = text
    return name, arguments, f"{key}[{index}]"


def test_every_tool_has_a_call_here() -> None:
    assert set(tool_calls(KEY)) == TOOLS


def test_in_process_a_lone_surrogate_or_nul_anywhere_is_a_usage_error_and_writes_nothing(
    project: Project,
) -> None:
    turn_key = setup_turn(project)
    calls = tool_calls(turn_key)
    server = build_server(str(project.root))
    before = files_of(project.root)

    async def call(name: str, arguments: dict[str, Any], where: str) -> Any:
        if where == "an argument name":
            # The SDK's client turns a surrogate in a key into U+FFFD on its side; the server's
            # own entry point is where another client's key arrives as sent.
            return await server.call_tool(name, arguments)
        async with Client(server) as client:
            return await client.call_tool(name, arguments)

    @settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(case=spoiled(calls, UNSENDABLE))
    def check(case: tuple[str, dict[str, Any], str]) -> None:
        name, arguments, where = case
        nul = "\\x00" in repr(arguments)
        result = anyio.run(call, name, arguments, where)
        assert result.is_error
        error = assert_typed(result.content[0].text)
        assert error["code"] == "usage", error
        why = "it holds a NUL character" if nul else "not Unicode text"
        assert f"invalid arguments for {name}: {where}: {why}" in error["message"], error
        assert files_of(project.root) == before

    check()


@pytest.mark.parametrize(
    ("value", "found"),
    [
        ({"a": ["ok", {"b": "x\udcff"}]}, ("a[1]['b']", "\\udcff")),
        ({"a": "fine", "b": ["\ud800"]}, ("b[0]", "\\ud800")),
        ({"\udfffkey": 1}, ("an argument name", "\\udfff")),
        ({"a": {"\ud83dx": 1}}, ("a, a key", "\\ud83d")),
        ({"a": "\U0001f600 emoji is text", "b": ["é"]}, None),
    ],
)
def test_the_walk_names_the_place(value: Any, found: tuple[str, str] | None) -> None:
    assert lone_surrogate(value) == found


def test_a_shared_or_cyclic_container_is_walked_once() -> None:
    cyclic: list[Any] = ["ok"]
    cyclic.append(cyclic)
    assert lone_surrogate({"a": cyclic}) is None


@pytest.fixture
def raw(project: Project, tmp_path_factory: pytest.TempPathFactory) -> RawServer:
    """A set-up project served over a raw stdio session."""
    setup_turn(project)
    return RawServer(project.root, tmp_path_factory.mktemp("server") / "stderr.txt")


def test_over_stdio_surrogate_escapes_and_non_utf8_bytes_are_answered_by_id(
    raw: RawServer, project: Project
) -> None:
    before = files_of(project.root)
    turn_key = json.loads((project.root / ".loopx/goals/g/state.json").read_text())["open_turns"]["builder"]
    calls = tool_calls(turn_key)
    ids = iter(range(1000, 10_000))

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(case=spoiled(calls), form=st.sampled_from(["escape", "surrogate bytes", "latin-1"]))
    def check(case: tuple[str, dict[str, Any], str], form: str) -> None:
        name, arguments, _ = case
        request_id = next(ids)
        message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call"}
        text = json.dumps({**message, "params": {"name": name, "arguments": arguments}}, ensure_ascii=False)
        if form == "escape":  # a JSON escape: Python's parser takes it, the SDK's does not
            line = json.dumps(json.loads(text), ensure_ascii=True).encode()
        elif form == "surrogate bytes":  # the surrogate's own three bytes, which UTF-8 forbids
            line = text.encode("utf-8", "surrogatepass")
        else:  # a client writing Latin-1: é is one byte that is not UTF-8
            line = _SURROGATE.sub("\u00e9", text).encode("latin-1", "replace")
        assert raw.proc.stdin is not None
        raw.proc.stdin.write(line + b"\n")
        raw.proc.stdin.flush()
        answer = raw.reply()
        assert answer["id"] == request_id and answer["error"]["code"] == -32600, answer
        said = answer["error"]["message"]
        assert ("not Unicode text (a lone surrogate" if form == "escape" else "not UTF-8 text") in said, said
        assert files_of(project.root) == before

    check()
    assert raw.request("tools/call", {"name": "status", "arguments": {}})["result"]["isError"] is False
    err = raw.close()
    assert "Traceback" not in err, err
