"""Benchmark the MCP server and the heartbeat loop (run by hand: `make bench`); prints figures.

- `loopx mcp serve` start-up (spawn to initialized) and the SDK import's share of it;
- one tool call round trip (should-run through MCP);
- a 50-tick loop: 50 full governed turns through MCP tools, and 50 idle CLI heartbeats.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from loopx_core.ops import goals, todos
from loopx_core.store.files import FileStore
from tests.conftest import T0

LOOPX = str(Path(sys.executable).parent / "loopx")
RUNS = int(os.environ.get("BENCH_RUNS", "7"))


def project(root: Path, todo_count: int) -> None:
    """A goal with `todo_count` todos for one agent."""
    store = FileStore(root)
    store.init()
    goals.add_goal(store, "g", "Objective", T0)
    goals.register_agent(store, "builder", [], T0)
    for n in range(todo_count):
        todos.add_todo(store, "g", f"Todo {n}", T0)


def wall(cmd: list[str]) -> float:
    """Median wall milliseconds of a command."""
    samples = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=False)
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


async def session_figures(root: Path, ticks: int) -> dict[str, float]:
    """Start-up, round trip and a loop of full turns in one server session."""
    params = StdioServerParameters(command=LOOPX, args=["--root", str(root), "mcp", "serve"])
    start = time.perf_counter()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        startup = (time.perf_counter() - start) * 1000
        trips = []
        for _ in range(20):
            t = time.perf_counter()
            await session.call_tool("quota_should_run", {"goal_id": "g", "agent_id": "builder"})
            trips.append((time.perf_counter() - t) * 1000)
        loop_start = time.perf_counter()
        for _ in range(ticks):
            packet = (
                await session.call_tool("quota_should_run", {"goal_id": "g", "agent_id": "builder"})
            ).structured_content
            assert packet and packet["should_run"], packet
            todo = packet["selected_todo"]["todo_id"]
            ids = {"goal_id": "g", "agent_id": "builder"}
            begun = (await session.call_tool("turn_begin", {**ids, "todo_id": todo})).structured_content
            key = begun["turn_key"]  # type: ignore[index]
            await session.call_tool(
                "writeback", {**ids, "turn_key": key, "summary": "x", "validation_status": "passed"}
            )
            await session.call_tool("quota_spend", {**ids, "turn_key": key})
            await session.call_tool("todo_complete", {**ids, "todo_id": todo})
        loop = (time.perf_counter() - loop_start) * 1000
    return {"startup": startup, "round_trip": statistics.median(trips), "loop": loop}


def main() -> None:
    """Measure and print."""
    ticks = 50
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        project(root, ticks)
        base = wall([sys.executable, "-c", "pass"])
        sdk = wall([sys.executable, "-c", "import mcp.server.mcpserver"])
        ours = wall(
            [
                sys.executable,
                "-c",
                "import loopx_core.mcp.server, loopx_core.decide.packet, loopx_core.settlement.turns",
            ]
        )
        starts = [anyio.run(session_figures, root, 0)["startup"] for _ in range(3)]
        figures = anyio.run(session_figures, root, ticks)
        env = {**os.environ, "LOOPX_ROOT": str(root)}
        idle = time.perf_counter()
        for _ in range(ticks):
            subprocess.run(
                [LOOPX, "quota", "should-run", "-g", "g", "-a", "builder", "--surface", "codex-app"],
                env=env,
                capture_output=True,
                check=True,
            )
        idle_ms = (time.perf_counter() - idle) * 1000
    startup = statistics.median(starts)
    print(f"python -c pass                          {base:8.1f} ms")
    print(f"import the mcp SDK (server)             {sdk:8.1f} ms  ({sdk - base:.0f} ms over python)")
    print(f"import LoopX's server-side modules      {ours:8.1f} ms  ({ours - base:.0f} ms over python)")
    print(
        f"MCP start-up, spawn to initialized      {startup:8.1f} ms  (SDK import {100 * (sdk - base) / startup:.0f}% of it)"
    )
    print(f"one tool call round trip (should-run)   {figures['round_trip']:8.1f} ms")
    print(
        f"{ticks} full turns through MCP tools        {figures['loop']:8.1f} ms  ({figures['loop'] / ticks:.0f} ms a turn)"
    )
    print(f"{ticks} idle CLI heartbeats (codex surface) {idle_ms:8.1f} ms  ({idle_ms / ticks:.0f} ms a tick)")


if __name__ == "__main__":
    main()
