"""Class: a client that sends its last requests and closes stdin at once.

Observed: `printf '<initialize>\\n<initialized>\\n<tools/call status>\\n' | loopx mcp serve`
answered the initialize request only: at the end of stdin the session ended and the requests
still being handled were dropped (the caller's read saw end of file, no answer, no error).

Now the end of stdin waits for every request handed on to be answered (up to
`transport.DRAIN_SECONDS`), then the server exits 0. Generated: batches of requests (tools,
prompts, pings, refused lines among them) written in one go, stdin closed right after: every
request id gets exactly one answer.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import LOOPX_BIN, T0_ISO, Project

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    },
}
CALLS = st.sampled_from(
    [
        ("tools/list", {}),
        ("prompts/list", {}),
        ("ping", {}),
        ("tools/call", {"name": "status", "arguments": {}}),
        ("tools/call", {"name": "goal_list", "arguments": {}}),
        ("tools/call", {"name": "no_such_tool", "arguments": {}}),
        ("tools/call", {"name": "status", "arguments": "not an object"}),  # refused by the transport
    ]
)


def _serve(root: Path, lines: list[str]) -> tuple[int, list[dict[str, object]]]:
    proc = subprocess.run(
        [str(LOOPX_BIN), "--root", str(root), "mcp", "serve"],
        input="".join(line + "\n" for line in lines).encode(),
        capture_output=True,
        env={**os.environ, "LOOPX_NOW": T0_ISO},
        timeout=60,
    )
    return proc.returncode, [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(calls=st.lists(CALLS, min_size=1, max_size=6), ids=st.sampled_from(["int", "str"]))
def test_every_request_sent_before_stdin_ends_is_answered(project: Project, calls: list, ids: str) -> None:
    requests = [
        {"jsonrpc": "2.0", "id": n if ids == "int" else f"r{n}", "method": method, "params": params}
        for n, (method, params) in enumerate(calls, start=1)
    ]
    lines = [json.dumps(INITIALIZE), json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})]
    code, answers = _serve(project.root, [*lines, *(json.dumps(r) for r in requests)])
    assert code == 0
    answered = [a["id"] for a in answers]
    assert sorted(map(str, answered)) == sorted(map(str, ["init", *(r["id"] for r in requests)])), answers
