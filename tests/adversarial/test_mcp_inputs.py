"""Class: every MCP call, however malformed, gets LoopX's typed answer and changes nothing it refuses.

Observed: wrong types, missing or unknown arguments, bad enum values and NaN lease minutes
were answered with the SDK's raw text or a bare "Error executing tool"; unknown arguments
were silently ignored; a 1 MB id was echoed back whole; a `tools/call` whose params was a
string got no reply at all. Here the tools are driven through the SDK's client, through a
raw stdio client writing JSON-RPC lines itself (NaN tokens, huge numbers, non-objects), and
by generated argument dicts over one long-lived server session.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.client.session import ClientSession

from loopx_core.mcp.answers import MAX_MESSAGE
from loopx_core.mcp.server import LoopxServer, strict_tool
from tests.conftest import Project
from tests.mcpclient import TOOLS, Tools, with_server
from tests.mcpinputs import RawServer, assert_typed, files_of, setup_turn

MEGABYTE_ID = "a" * 1_000_000
SETTLEMENT_CODES = set(range(10, 20))
"""Settlement refusals may journal the failure (a `failed` tombstone) but settle nothing."""
SETTLED_FILES = ("events.jsonl", "receipts.json", "runs/")


# -- through the SDK's own client ---------------------------------------------------------

CLAIM = {"goal_id": "g", "todo_id": "t2", "agent_id": "other"}

BAD_CALLS = [
    pytest.param("todo_claim", {**CLAIM, "lease_minutes": "30"}, "lease_minutes", id="string-for-number"),
    pytest.param("todo_claim", {**CLAIM, "goal_id": 7}, "goal_id", id="number-for-id"),
    pytest.param("todo_claim", {**CLAIM, "agent_id": ["other"]}, "agent_id", id="list-for-id"),
    pytest.param("todo_complete", {**CLAIM, "no_follow_up": 1}, "no_follow_up", id="number-for-bool"),
    pytest.param("todo_complete", {**CLAIM, "evidence": "ok"}, "evidence", id="string-for-list"),
    pytest.param("todo_complete", {**CLAIM, "evidence": [1, 2]}, "evidence[0]", id="numbers-in-list"),
    pytest.param("todo_claim", {"goal_id": "g", "todo_id": "t2"}, "agent_id", id="missing"),
    pytest.param("todo_claim", {**CLAIM, "lease_minuets": 5}, "lease_minuets", id="unknown-argument"),
    pytest.param("status", {"verbose": True}, "verbose", id="unknown-argument-no-args-tool"),
    pytest.param("todo_list", {"goal_id": "g", "status": "finished"}, "status", id="bad-enum"),
    pytest.param(
        "writeback",
        {"goal_id": "g", "agent_id": "builder", "turn_key": "k", "summary": "x", "validation_status": "ok"},
        "validation_status",
        id="bad-enum-required",
    ),
    pytest.param("todo_claim", {**CLAIM, "lease_minutes": float("nan")}, "lease_minutes", id="nan"),
    pytest.param("todo_claim", {**CLAIM, "lease_minutes": float("inf")}, "lease_minutes", id="inf"),
    pytest.param("todo_claim", {**CLAIM, "lease_minutes": 10**400}, "lease_minutes", id="huge-int"),
    pytest.param("todo_claim", {**CLAIM, "lease_minutes": 1e300}, "lease", id="huge-float"),
    pytest.param(
        "todo_claim", {**CLAIM, "goal_id": "../../../escape"}, "goal_id: not a valid id", id="climbing-id"
    ),
    pytest.param(
        "todo_claim", {**CLAIM, "todo_id": MEGABYTE_ID}, "todo_id: not a valid id", id="megabyte-id"
    ),
    pytest.param("todo_claim", {**CLAIM, MEGABYTE_ID: 1}, "aaaa", id="megabyte-argument-name"),
    pytest.param("no_such_tool", {}, "unknown tool", id="unknown-tool"),
]


@pytest.mark.parametrize(("tool", "arguments", "named"), BAD_CALLS)
def test_a_bad_call_is_a_typed_usage_error_and_writes_nothing(
    project: Project, tool: str, arguments: dict[str, Any], named: str
) -> None:
    setup_turn(project)
    before = files_of(project.root)

    async def body(session: ClientSession, tools: Tools) -> str:
        result = await session.call_tool(tool, arguments)
        assert result.is_error and result.structured_content is None
        [content] = result.content
        return content.text  # type: ignore[union-attr]

    text = with_server(project.root, body)
    error = assert_typed(text)
    assert (error["code"], error["exit_code"]) == ("usage", 2), error
    assert named in error["message"]
    assert "Error executing tool" not in text and "pydantic" not in text and "aaaa" * 40 not in text
    assert files_of(project.root) == before


def test_the_published_schemas_refuse_unknown_arguments(project: Project) -> None:
    async def body(session: ClientSession, tools: Tools) -> dict[str, Any]:
        return {t.name: t.input_schema for t in (await session.list_tools()).tools}

    schemas = with_server(project.root, body)
    assert set(schemas) == TOOLS
    assert all(s["additionalProperties"] is False for s in schemas.values())


def test_an_unexpected_exception_in_a_tool_is_typed_internal_without_traceback(
    project: Project, capfd: pytest.CaptureFixture[str]
) -> None:
    from mcp.client.client import Client

    def crash(goal_id: str) -> dict[str, Any]:
        """A tool whose body fails the way a bug would."""
        raise RuntimeError(f"secret detail at {project.root}")

    server = LoopxServer([strict_tool(crash)], lambda: [project.root])

    async def main() -> str:
        async with Client(server) as client:
            result = await client.call_tool("crash", {"goal_id": "g"})
            assert result.is_error
            return result.content[0].text  # type: ignore[union-attr]

    data = json.loads(anyio.run(main))
    assert data["error"]["code"] == "internal" and data["error"]["exit_code"] == 1
    assert "secret" not in data["error"]["message"] and str(project.root) not in data["error"]["message"]
    err = capfd.readouterr().err
    assert "Traceback" not in err and "secret" not in err
    assert "internal error in tool crash: RuntimeError" in err


# -- a raw stdio client: JSON-RPC lines written by hand -----------------------------------


@pytest.fixture
def raw(project: Project, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawServer]:
    """A set-up project served over a raw stdio session (its stderr kept outside the project)."""
    setup_turn(project)
    server = RawServer(project.root, tmp_path_factory.mktemp("server") / "stderr.txt")
    yield server
    if server.proc.poll() is None:
        server.close()


MALFORMED = [
    pytest.param(
        '{"jsonrpc": "2.0", "id": 41, "method": "tools/call", "params": "abc"}',
        41,
        -32602,
        id="params-string",
    ),
    pytest.param(
        '{"jsonrpc": "2.0", "id": "s", "method": "tools/call", "params": [1]}', "s", -32602, id="params-array"
    ),
    pytest.param(
        '{"jsonrpc": "2.0", "id": 42, "method": "tools/call", "params": {"name": "status", "arguments": "x"}}',
        42,
        -32602,
        id="arguments-string",
    ),
    pytest.param('{"jsonrpc": "2.0", "id": 43, "method": "tools/call"}', 43, -32602, id="no-params"),
    pytest.param(
        '{"jsonrpc": "1.0", "id": 44, "method": "tools/call", "params": {}}', 44, -32600, id="wrong-version"
    ),
    pytest.param('{"jsonrpc": "2.0", "id": 45, "method": 5}', 45, -32600, id="method-number"),
    pytest.param('{"jsonrpc": "2.0", "id": true, "method": "tools/list"}', None, -32600, id="id-bool"),
    pytest.param('{"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}', None, -32600, id="id-float"),
    pytest.param('{"jsonrpc": "2.0", "id": null, "method": "tools/list"}', None, -32600, id="id-null"),
    pytest.param("not json at all", None, -32700, id="not-json"),
    pytest.param(
        '{"jsonrpc": "2.0", "id": 46, "method": "tools/call", "params": {', None, -32700, id="truncated"
    ),
    pytest.param("[1, 2, 3]", None, -32600, id="batch"),
    pytest.param('"just a string"', None, -32600, id="string"),
    pytest.param("[" * 100_000 + "]" * 100_000, None, -32700, id="deep-nesting"),
]


@pytest.mark.parametrize(("line", "reply_id", "code"), MALFORMED)
def test_a_malformed_line_gets_a_json_rpc_error_and_the_session_goes_on(
    raw: RawServer, line: str, reply_id: Any, code: int
) -> None:
    raw.send(line)
    answer = raw.reply()
    assert answer["jsonrpc"] == "2.0" and answer["id"] == reply_id and answer["error"]["code"] == code, answer
    assert len(json.dumps(answer)) < 500
    listed = raw.request("tools/list", {})
    assert {t["name"] for t in listed["result"]["tools"]} == TOOLS
    err = raw.close()
    assert "Traceback" not in err, err


def test_an_over_long_line_is_answered_and_skipped(raw: RawServer) -> None:
    from loopx_core.mcp.transport import MAX_LINE

    raw.send(
        '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "' + "x" * MAX_LINE + '"}}'
    )
    answer = raw.reply()
    assert answer["id"] is None and answer["error"]["code"] == -32600, answer
    assert raw.request("tools/call", {"name": "status", "arguments": {}})["result"]["isError"] is False
    assert "Traceback" not in raw.close()


def test_nan_tokens_and_a_megabyte_id_over_raw_json_rpc(raw: RawServer) -> None:
    for arguments, named in [
        ({**CLAIM, "lease_minutes": float("nan")}, "lease_minutes"),
        ({**CLAIM, "lease_minutes": float("-inf")}, "lease_minutes"),
        ({**CLAIM, "lease_minutes": "NaN"}, "lease_minutes"),
        ({**CLAIM, "agent_id": MEGABYTE_ID}, "agent_id: not a valid id"),
    ]:
        answer = raw.request("tools/call", {"name": "todo_claim", "arguments": arguments})
        result = answer["result"]
        assert result["isError"] is True
        error = assert_typed(result["content"][0]["text"])
        assert error["code"] == "usage" and named in error["message"]
        assert len(json.dumps(answer)) < 2 * MAX_MESSAGE
    assert "Traceback" not in raw.close()


# -- generated calls over one long-lived session ------------------------------------------

GENERATED_CASES = 200
HUGE = ["b" * 1_000_000, "x y " * 50_000, "\u00e9\U0001f600" * 20_000]
NUMBERS = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.integers(min_value=10**300, max_value=10**400),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, -1, 0.5, 1e300, -1e-300, 2**63]),
)
SCALARS = st.one_of(st.none(), st.booleans(), NUMBERS, st.text(max_size=40), st.sampled_from(HUGE))
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=8,
)
LIKELY = {
    "goal_id": ["g", "G", "nope", "g\n", "../g", "../../../escape"],
    "agent_id": ["builder", "other", "ghost"],
    "todo_id": ["t1", "t2", "t3", "t99", None],
    "turn_instance_id": ["i-1", None],
    "summary": ["did it", ""],
    "validation_status": ["passed", "failed"],
    "status": ["open", "claimed", "done", "blocked", "deferred", None],
    "evidence": [["ran tests"], [], None],
    "changed_files": [["a.txt"], ["/etc/passwd"], None],
    "available_capabilities": [["python"], None],
    "surface": ["codex-app", "claude-code", None],
    "lease_minutes": [30, 0.01, 1e6, -5],
    "no_follow_up": [True, False],
    "replan": [True, False],
}


def _value(name: str, turn_key: str) -> st.SearchStrategy[Any]:
    likely = [turn_key, "sha256:" + "0" * 64] if name == "turn_key" else LIKELY.get(name, [])
    if not likely:
        return VALUES
    return st.one_of(st.sampled_from(likely), st.sampled_from(likely), st.sampled_from(likely), VALUES)


def tool_calls(schemas: dict[str, dict[str, Any]], turn_key: str) -> st.SearchStrategy[tuple[str, Any]]:
    """A tool name (now and then an unknown one) and its arguments: mostly complete, often odd."""

    def for_tool(name: str) -> st.SearchStrategy[tuple[str, Any]]:
        schema = schemas.get(name, {})
        names = sorted(schema.get("properties", {}))
        required = set(schema.get("required", []))
        optional = {n: _value(n, turn_key) for n in names if n not in required}
        complete = st.fixed_dictionaries({n: _value(n, turn_key) for n in required}, optional=optional)
        partial = st.fixed_dictionaries({}, optional={n: _value(n, turn_key) for n in names})
        extra = st.dictionaries(st.text(min_size=1, max_size=12) | st.sampled_from(HUGE), VALUES, max_size=2)
        arguments = st.one_of(
            complete,
            complete,
            complete,
            complete,
            partial,
            st.builds(lambda a, b: {**b, **a}, complete, extra),
            VALUES.filter(lambda v: not isinstance(v, dict)),
        )
        return st.tuples(st.just(name), arguments)

    return st.sampled_from([*sorted(schemas), "no_such_tool", "Status"]).flatmap(for_tool)


def test_generated_calls_get_typed_answers_and_refusals_change_nothing(
    raw: RawServer, project: Project
) -> None:
    root = project.root
    turn_key = json.loads((root / ".loopx/goals/g/state.json").read_text())["open_turns"]["builder"]
    listed = raw.request("tools/list", {})["result"]["tools"]
    schemas = {t["name"]: t["inputSchema"] for t in listed}
    seen: Counter[str] = Counter()
    private = [str(root), str(root.resolve()), str(root.parent), os.environ["HOME"]]

    @settings(
        max_examples=GENERATED_CASES,
        deadline=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.large_base_example,
        ],
    )
    @given(call=tool_calls(schemas, turn_key))
    def check(call: tuple[str, Any]) -> None:
        name, arguments = call
        before = files_of(root)
        answer = raw.request("tools/call", {"name": name, "arguments": arguments})
        text = json.dumps(answer, ensure_ascii=False)
        assert not any(p in text for p in private), text[:500]
        assert raw.proc.poll() is None
        if not isinstance(arguments, dict | None):  # null arguments are no arguments
            assert answer["error"]["code"] == -32602, answer
            seen["json-rpc error"] += 1
            assert files_of(root) == before
            return
        result = answer["result"]
        if not result.get("isError"):
            assert isinstance(result["structuredContent"], dict), result
            seen["success"] += 1
            return
        error = assert_typed(result["content"][0]["text"])
        seen[error["code"]] += 1
        after = files_of(root)
        if error["exit_code"] in SETTLEMENT_CODES:
            settled = [f for f in set(before) | set(after) if f.endswith(SETTLED_FILES) or "/runs/" in f]
            assert {f: before.get(f) for f in settled} == {f: after.get(f) for f in settled}, error
        else:
            assert after == before, error

    check()
    err = raw.close()
    print(f"\nMCP generated calls: {sum(seen.values())} over one session; answers by kind: {dict(seen)}")
    assert sum(seen.values()) >= GENERATED_CASES
    assert "Traceback" not in err, err[-2000:]
    assert seen["usage"] > 0 and seen["success"] > 0
