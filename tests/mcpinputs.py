"""Shared by the MCP adversarial tests: a set-up goal, the project's files, LoopX's typed error,
a raw stdio session, and a well-formed call of every tool."""

from __future__ import annotations

import hashlib
import json
import os
import select
import subprocess
from pathlib import Path
from typing import Any

from loopx_core.errors import EXIT_CODES, ExitCode
from loopx_core.mcp.answers import MAX_MESSAGE
from loopx_core.ops import goals, todos
from loopx_core.settlement.turns import begin_turn
from tests.conftest import LOOPX_BIN, T0, T0_ISO, Project

EXIT_CODES = {int(code) for code in EXIT_CODES}
"""Every documented exit code."""


def setup_turn(project: Project) -> str:
    """Goal g, agents builder and other, todos t1-t3, builder's turn begun on t1: its key."""
    store = project.store
    goals.add_goal(store, "g", "Objective", T0)
    goals.register_agent(store, "builder", [], T0)
    goals.register_agent(store, "other", [], T0)
    for title in ("First", "Second", "Third"):
        todos.add_todo(store, "g", title, T0)
    journal, _ = begin_turn(store, "g", "builder", T0, todo_id="t1")
    return journal.turn_key


def files_of(root: Path) -> dict[str, str]:
    """Every file in the project's folder and around it (`.loopx/locks/` aside): its hash.

    The folder around catches a file written through an id that climbs out of `.loopx/`.
    """
    base = root.parent
    return {
        str(p.relative_to(base)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(base.rglob("*"))
        if p.is_file() and p.parent != root / ".loopx" / "locks"
    }


def assert_typed(text: str) -> dict[str, Any]:
    """`text` is exactly LoopX's JSON error object with a documented exit code; the object."""
    data = json.loads(text)
    assert list(data) == ["error"], text[:300]
    error = data["error"]
    assert set(error) <= {"code", "message", "exit_code", "step"} and {"code", "message", "exit_code"} <= set(
        error
    )
    assert isinstance(error["code"], str) and isinstance(error["message"], str)
    assert error["exit_code"] in EXIT_CODES, error
    assert error["code"] != "internal" and error["exit_code"] != int(ExitCode.INTERNAL), error
    assert len(error["message"]) <= MAX_MESSAGE
    return error


class RawServer:
    """`loopx mcp serve` driven line by line over its stdin and stdout."""

    def __init__(self, root: Path, stderr: Path) -> None:
        env = {**os.environ, "LOOPX_NOW": T0_ISO}
        self._err = stderr.open("wb")
        self.proc = subprocess.Popen(
            [str(LOOPX_BIN), "--root", str(root), "mcp", "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._err,
            env=env,
        )
        self.stderr = stderr
        self._buffer = b""
        self._next_id = 0
        reply = self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        )
        assert "result" in reply, reply
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: Any) -> None:
        """Write one line: a JSON value (NaN and infinities as bare tokens) or raw text."""
        line = message if isinstance(message, str) else json.dumps(message, allow_nan=True)
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def reply(self, timeout: float = 20) -> dict[str, Any]:
        """The next line the server writes, parsed; fails on silence or exit."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buffer:
            ready, _, _ = select.select([fd], [], [], timeout)
            assert ready, "the server did not answer"
            chunk = os.read(fd, 1 << 16)
            assert chunk, f"the server exited ({self.proc.poll()})"
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    def request(self, method: str, params: Any) -> dict[str, Any]:
        """Send a request with a fresh id; its reply (which must carry that id)."""
        self._next_id += 1
        self.send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        answer = self.reply()
        assert answer.get("id") == self._next_id, answer
        return answer

    def close(self) -> str:
        """End the session (stdin closed); the server's stderr."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=20)
        self._err.close()
        return self.stderr.read_text(errors="replace")


def tool_calls(turn_key: str) -> dict[str, dict[str, Any]]:
    """A well-formed call of every tool (its strings are where a surrogate goes)."""
    who = {"goal_id": "g", "agent_id": "builder"}
    turn = {**who, "turn_key": turn_key}
    return {
        "quota_should_run": {**who, "available_capabilities": ["python"], "surface": "codex-app"},
        "todo_list": {"goal_id": "g", "status": "open"},
        "todo_claim": {"goal_id": "g", "todo_id": "t2", "agent_id": "other"},
        "todo_complete": {"goal_id": "g", "todo_id": "t1", "agent_id": "builder", "evidence": ["ran"]},
        "turn_begin": {"goal_id": "g", "agent_id": "other", "todo_id": "t3", "turn_instance_id": "i-1"},
        "writeback": {**turn, "summary": "did it", "validation_status": "passed", "changed_files": ["a"]},
        "quota_spend": turn,
        "turn_renew": turn,
        "turn_inspect_journal": turn,
        "status": {},
        "todo_add": {"goal_id": "g", "title": "A title", "required_capabilities": ["python"]},
        "todo_update": {"goal_id": "g", "todo_id": "t2", "title": "New title"},
        "turn_cancel": {**turn, "reason": "stop"},
        "focus_wait": {"goal_id": "g", "reason": "CI runs", "for_minutes": 5},
        "focus_poll": {"goal_id": "g"},
        "focus_done": {"goal_id": "g", "evidence": "green"},
        "gate_open": {"goal_id": "g", "title": "Review"},
        "gate_resolve": {"goal_id": "g", "gate_id": "x1", "resolution": "ok"},
        "history": {"goal_id": "g"},
    }
