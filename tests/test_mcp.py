"""`loopx mcp serve` through the SDK's own client over stdio, against a real server process."""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp.client.session import ClientSession

from loopx_core.ops import goals, todos
from loopx_core.store.files import FileStore
from tests.conftest import LOOPX_BIN, T0, run_loopx
from tests.mcpclient import TOOLS, Tools, with_server


def project(root: Path, todo_titles: tuple[str, ...] = ("First", "Second")) -> None:
    store = FileStore(root)
    store.init()
    goals.add_goal(store, "g", "Objective", T0)
    goals.register_agent(store, "builder", [], T0)
    goals.register_agent(store, "other", [], T0)
    for title in todo_titles:
        todos.add_todo(store, "g", title, T0)


def test_lists_the_tools(tmp_path: Path) -> None:
    project(tmp_path)

    async def body(session: ClientSession, tools: Tools) -> set[str]:
        listed = await session.list_tools()
        for tool in listed.tools:
            assert tool.description and tool.input_schema["type"] == "object"
        return {t.name for t in listed.tools}

    assert with_server(tmp_path, body) == TOOLS


def test_a_whole_governed_turn_through_tools_alone(tmp_path: Path) -> None:
    project(tmp_path)

    async def body(session: ClientSession, tools: Tools) -> dict[str, Any]:
        packet = await tools("quota_should_run", goal_id="g", agent_id="builder")
        assert packet["decision"] == "run" and packet["selected_todo"]["todo_id"] == "t1"
        instance = packet["settlement_plan"]["identity"]["turn_instance_id"]
        begun = await tools(
            "turn_begin", goal_id="g", agent_id="builder", todo_id="t1", turn_instance_id=instance
        )
        key = begun["turn_key"]
        assert key == packet["settlement_plan"]["turn_key"]
        (tmp_path / "work.txt").write_text("done by the agent\n")
        early = await tools("quota_spend", goal_id="g", agent_id="builder", turn_key=key)
        assert early["error"]["code"] == "writeback_missing"
        written = await tools(
            "writeback",
            goal_id="g",
            agent_id="builder",
            turn_key=key,
            summary="wrote work.txt",
            validation_status="passed",
            evidence=["cat work.txt"],
            changed_files=["work.txt"],
        )
        assert written["next_phase"] == "quota_spend"
        spent = await tools("quota_spend", goal_id="g", agent_id="builder", turn_key=key)
        again = await tools("quota_spend", goal_id="g", agent_id="builder", turn_key=key)
        assert spent["status"] == "committed" and again["effects"] == []
        done = await tools("todo_complete", goal_id="g", todo_id="t1", agent_id="builder", evidence=["ok"])
        assert done["status"] == "done"
        listed = await tools("todo_list", goal_id="g")
        inspected = await tools("turn_inspect_journal", goal_id="g", agent_id="builder", turn_key=key)
        status = await tools("status")
        return {"listed": listed, "inspected": inspected, "status": status}

    out = with_server(tmp_path, body)
    assert [t["status"] for t in out["listed"]["todos"]] == ["done", "open"]
    assert out["inspected"]["decision"] == "replay_legal" and out["inspected"]["effects"] == []
    assert out["status"]["goals"][0]["todos_done"] == 1
    assert len((tmp_path / ".loopx/goals/g/events.jsonl").read_text().splitlines()) == 1


@pytest.mark.parametrize(
    ("call", "code"),
    [
        ({"name": "quota_should_run", "goal_id": "Bad/Id", "agent_id": "builder"}, "usage"),
        ({"name": "quota_should_run", "goal_id": "nope", "agent_id": "builder"}, "not_found"),
        (
            {"name": "turn_begin", "goal_id": "g", "agent_id": "builder", "todo_id": "t1", "replan": True},
            "invalid_identity",
        ),
        (
            {"name": "turn_inspect_journal", "goal_id": "g", "agent_id": "builder", "turn_key": "sha256:zz"},
            "usage",
        ),
    ],
)
def test_refusals_are_typed(tmp_path: Path, call: dict[str, Any], code: str) -> None:
    project(tmp_path)

    async def body(session: ClientSession, tools: Tools) -> dict[str, Any]:
        args = dict(call)
        return await tools(args.pop("name"), **args)

    assert with_server(tmp_path, body)["error"]["code"] == code


def test_settlement_refusals_keep_their_kind(tmp_path: Path) -> None:
    project(tmp_path)

    async def body(session: ClientSession, tools: Tools) -> list[str]:
        key = (await tools("turn_begin", goal_id="g", agent_id="builder", todo_id="t1"))["turn_key"]
        kinds = [(await tools("quota_spend", goal_id="g", agent_id="builder", turn_key=key))["error"]["code"]]
        kinds.append(
            (await tools("quota_spend", goal_id="g", agent_id="other", turn_key=key))["error"]["code"]
        )
        bad = await tools(
            "writeback",
            goal_id="g",
            agent_id="builder",
            turn_key=key,
            summary="x",
            validation_status="failed",
        )
        kinds.append(bad["error"]["code"])
        kinds.append(
            (await tools("turn_begin", goal_id="g", agent_id="builder", todo_id="t2"))["error"]["code"]
        )
        closeout = await tools(
            "todo_complete", goal_id="g", todo_id="t1", agent_id="builder", no_follow_up=True, turn_key=key
        )
        kinds.append(closeout["error"]["code"])
        return kinds

    assert with_server(tmp_path, body) == [
        "writeback_missing",
        "permission_denied",
        "writeback_rejected",
        "identity_mismatch",
        "receipt_missing",
    ]


def test_server_holds_no_state_cli_and_server_side_by_side(tmp_path: Path) -> None:
    project(tmp_path)

    async def body(session: ClientSession, tools: Tools) -> list[str]:
        seen = [
            (await tools("quota_should_run", goal_id="g", agent_id="builder"))["selected_todo"]["todo_id"]
        ]
        claimed = run_loopx("todo", "claim", "-g", "g", "-t", "t1", "-a", "other", root=tmp_path, now=None)
        assert claimed.exit_code == 0
        seen.append(
            (await tools("quota_should_run", goal_id="g", agent_id="builder"))["selected_todo"]["todo_id"]
        )
        return seen

    assert with_server(tmp_path, body) == ["t1", "t2"]


def test_a_loop_of_tool_calls_finishes_the_goal(tmp_path: Path) -> None:
    """The MCP protocol alone: should-run, begin, work, writeback, spend, complete, until idle."""
    project(tmp_path, ("Low", "High", "Middle"))
    store = FileStore(tmp_path)
    store.update_goal(
        "g", lambda s: [setattr(t, "priority", p) for t, p in zip(s.todos, (3, 0, 1), strict=True)]
    )

    async def body(session: ClientSession, tools: Tools) -> list[str]:
        worked = []
        for _ in range(6):
            packet = await tools("quota_should_run", goal_id="g", agent_id="builder")
            if not packet["should_run"]:
                break
            todo = packet["selected_todo"]["todo_id"]
            instance = packet["settlement_plan"]["identity"]["turn_instance_id"]
            key = (
                await tools(
                    "turn_begin", goal_id="g", agent_id="builder", todo_id=todo, turn_instance_id=instance
                )
            )["turn_key"]
            (tmp_path / f"{todo}.txt").write_text("work\n")
            worked.append(todo)
            await tools(
                "writeback",
                goal_id="g",
                agent_id="builder",
                turn_key=key,
                summary=f"{todo} done",
                validation_status="passed",
            )
            await tools("quota_spend", goal_id="g", agent_id="builder", turn_key=key)
            last = packet["work_lane_contract"]["next_lane"] == "replan"
            await tools(
                "todo_complete",
                goal_id="g",
                todo_id=todo,
                agent_id="builder",
                no_follow_up=last,
                turn_key=key if last else None,
            )
        return worked

    assert with_server(tmp_path, body) == ["t2", "t3", "t1"]
    spends = (tmp_path / ".loopx/goals/g/events.jsonl").read_text().splitlines()
    assert len(spends) == 3 and len({json.loads(s)["turn_instance_id"] for s in spends}) == 3
    assert json.loads((tmp_path / ".loopx/registry.json").read_text())["goals"]["g"]["status"] == "done"


BROKEN_SDKS = {
    "raises": "raise ImportError('simulated broken install')\n",
    "syntax-error": "def (:\n",
    "missing-submodules": "",
    "crashes": "import os\nos.environ['X'] = None\n",
}


def _shadow(folder: Path, body: str) -> dict[str, str]:
    """An environment whose `mcp` package is a broken module placed ahead of the real one."""
    package = folder / "shadow" / "mcp"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(body)
    return {"PYTHONPATH": str(folder / "shadow")}


@pytest.mark.parametrize("kind", sorted(BROKEN_SDKS))
def test_a_broken_sdk_is_one_line_and_exit_1(tmp_path: Path, kind: str) -> None:
    project(tmp_path)
    result = run_loopx("mcp", "serve", root=tmp_path, env=_shadow(tmp_path, BROKEN_SDKS[kind]))
    assert result.exit_code == 1 and result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith("loopx: error: cannot serve MCP: the MCP SDK (`mcp` package) does not import")
    assert "reinstall LoopX" in line and str(tmp_path) not in line


def test_other_commands_never_import_the_sdk(tmp_path: Path) -> None:
    """The SDK stays out of every other command: a broken one does not touch them."""
    project(tmp_path)
    env = _shadow(tmp_path, BROKEN_SDKS["raises"])
    for args in (
        ("--version",),
        ("quota", "should-run", "-g", "g", "-a", "builder"),
        ("todo", "list", "-g", "g"),
    ):
        result = run_loopx(*args, root=tmp_path, env=env)
        assert result.exit_code == 0 and "Traceback" not in result.stderr, (args, result.stderr)


def test_the_sdk_is_a_core_dependency() -> None:
    import re
    import tomllib

    from tests.conftest import REPO

    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    assert "mcp" in {re.split(r"[\s<>=!~\[;]", d, maxsplit=1)[0].lower() for d in declared}


def _started(root: Path) -> subprocess.Popen[bytes]:
    """`loopx mcp serve` with the handshake done, over raw pipes."""
    server = subprocess.Popen(
        [str(LOOPX_BIN), "--root", str(root), "mcp", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write(
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}).encode() + b"\n"
    )
    server.stdin.flush()
    assert b'"result"' in server.stdout.readline()
    return server


def test_ctrl_c_ends_the_server_at_once_without_traceback(tmp_path: Path) -> None:
    project(tmp_path)
    server = _started(tmp_path)
    server.send_signal(signal.SIGINT)  # stdin stays open: the reader must not hold the exit
    assert server.wait(timeout=15) == 130
    assert server.stderr is not None and server.stderr.read() == b""


def test_a_client_that_closes_its_end_ends_the_session_quietly(tmp_path: Path) -> None:
    project(tmp_path)
    server = _started(tmp_path)
    assert server.stdin is not None and server.stdout is not None
    server.stdout.close()
    request = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).encode() + b"\n"
    with contextlib.suppress(BrokenPipeError):
        server.stdin.write(request)
        server.stdin.flush()
        server.stdin.close()
    assert server.wait(timeout=15) == 0
    assert server.stderr is not None and server.stderr.read() == b""
