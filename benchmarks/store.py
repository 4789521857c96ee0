"""Benchmark the two stores in one run, on the same scenario: files and PostgreSQL.

For each store, in whole-process wall time (real `loopx` processes):
- should-run latency: the median of `loopx quota should-run` on a goal with one todo;
- whole-turn latency: the median of `loopx turn run-once` (should-run, begin, host command
  `true`, validation `true`, writeback, spend) on fresh todos;
- throughput: settled turns per second with 1, 4 and 8 agents running `turn run-once` loops
  concurrently on one goal, each on its own todos (one project folder per agent for
  PostgreSQL, as machines would; one shared project for files, the only way files share).
PostgreSQL is a throw-away cluster started here (tests/pg.py: private socket, fsync off as
in the tests: the figures are the engine's, not a disk's). Figures, not assertions: run by
hand (`python benchmarks/store.py`, BENCH_RUNS and BENCH_TURNS to change the sizes).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from loopx_core.ops import goals, todos
from loopx_core.store.base import Store
from loopx_core.store.choice import open_target, record
from tests.conftest import T0
from tests.pg import start_cluster, stop_cluster

LOOPX = str(Path(sys.executable).parent / "loopx")
RUNS = int(os.environ.get("BENCH_RUNS", "15"))
TURNS = int(os.environ.get("BENCH_TURNS", "12"))
"""Turns per agent in the throughput runs."""
RUN_ONCE = ["--host-command", "true", "--validation-command", "true"]


def env() -> dict[str, str]:
    """The process environment without any LoopX choice of root, store or time."""
    return {k: v for k, v in os.environ.items() if not k.startswith("LOOPX_")}


def loopx(root: Path, *args: str) -> float:
    """Wall milliseconds of one `loopx` process in `root` (it must succeed)."""
    start = time.perf_counter()
    proc = subprocess.run([LOOPX, *args], cwd=root, env=env(), capture_output=True, text=True, check=False)
    elapsed = (time.perf_counter() - start) * 1000
    if proc.returncode != 0:
        raise SystemExit(f"loopx {' '.join(args[:2])} failed ({proc.returncode}): {proc.stderr.strip()}")
    return elapsed


def scenario(store: Store, agents: int, todos_each: int) -> None:
    """Goal `g`, agents a1..aN, each with its own todos (bound to it)."""
    store.init()
    goals.add_goal(store, "g", "Benchmark", T0)
    for n in range(1, agents + 1):
        goals.register_agent(store, f"a{n}", [], T0)
        for i in range(todos_each):
            todos.add_todo(store, "g", f"Todo {i} of a{n}", T0, bound_agent=f"a{n}")


class Target:
    """Where a run's projects live: files (one shared folder) or PostgreSQL (a folder per agent)."""

    def __init__(self, kind: str, base: Path, cluster: object | None) -> None:
        self.kind, self.base, self.cluster, self.count = kind, base, cluster, 0

    def fresh(self, agents: int, todos_each: int) -> list[Path]:
        """A new scenario; the project folder each agent runs in."""
        self.count += 1
        shared = self.base / f"{self.kind}-{self.count}"
        folders = [shared] if self.kind == "files" else [shared / f"m{n}" for n in range(1, agents + 1)]
        for folder in folders:
            folder.mkdir(parents=True)
        target = "files" if self.kind == "files" else self.cluster.fresh_schema()  # type: ignore[attr-defined]
        store = open_target(folders[0], target)
        scenario(store, agents, todos_each)
        if self.kind != "files":
            for folder in folders:
                record(folder, target)
            store.close()  # type: ignore[attr-defined]
        return folders if self.kind != "files" else folders * agents


def latencies(target: Target) -> tuple[float, float]:
    """Median should-run and median whole turn (run-once), milliseconds."""
    (root,) = target.fresh(1, RUNS + 1)[:1]
    loopx(root, "quota", "should-run", "-g", "g", "-a", "a1")  # warm the caches
    should_run = [loopx(root, "quota", "should-run", "-g", "g", "-a", "a1") for _ in range(RUNS)]
    turns = [loopx(root, "turn", "run-once", "-g", "g", "-a", "a1", *RUN_ONCE) for _ in range(RUNS)]
    return statistics.median(should_run), statistics.median(turns)


def throughput(target: Target, agents: int) -> float:
    """Settled turns per second with `agents` concurrent run-once loops."""
    folders = target.fresh(agents, TURNS)

    def loop(root: Path, agent: str) -> None:
        for _ in range(TURNS):
            loopx(root, "turn", "run-once", "-g", "g", "-a", agent, *RUN_ONCE)

    threads = [threading.Thread(target=loop, args=(folders[n], f"a{n + 1}")) for n in range(agents)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return agents * TURNS / (time.perf_counter() - start)


def main() -> None:
    """Measure both stores and print one table."""
    cluster = start_cluster()
    try:
        with tempfile.TemporaryDirectory(prefix="loopx-bench-") as folder:
            rows = []
            for kind in ("files", "postgresql"):
                target = Target(kind, Path(folder), cluster)
                should_run, turn = latencies(target)
                rates = [throughput(target, n) for n in (1, 4, 8)]
                rows.append((kind, should_run, turn, rates))
    finally:
        stop_cluster(cluster)
    print(
        f"store benchmark: {RUNS} runs for latencies, {TURNS} turns per agent for throughput, {os.cpu_count()} cores"
    )
    print("| store | should-run (ms) | whole turn (ms) | turns/s, 1 agent | 4 agents | 8 agents |")
    print("|---|---|---|---|---|---|")
    for kind, should_run, turn, rates in rows:
        print(f"| {kind} | {should_run:.0f} | {turn:.0f} | " + " | ".join(f"{r:.2f}" for r in rates) + " |")


if __name__ == "__main__":
    main()
