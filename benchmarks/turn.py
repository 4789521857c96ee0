"""Benchmark a full CLI turn (begin, writeback, spend, closeout) in whole-process wall time.

Prints the median total of the four commands over fresh projects, each command's median,
and the ratio to one `loopx quota should-run` measured in the same run. Run by hand
(`make bench`); figures, not assertions.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from loopx_core.ops import goals, todos
from loopx_core.store.files import FileStore
from tests.conftest import T0

LOOPX = str(Path(sys.executable).parent / "loopx")
RUNS = int(os.environ.get("BENCH_RUNS", "11"))


def project(root: Path) -> None:
    """One goal, one agent, one todo."""
    store = FileStore(root)
    store.init()
    goals.add_goal(store, "g", "Objective", T0)
    goals.register_agent(store, "builder", [], T0)
    todos.add_todo(store, "g", "The only todo", T0)


def timed(args: list[str], env: dict[str, str]) -> tuple[float, str]:
    """Wall milliseconds and stdout of one `loopx` process."""
    start = time.perf_counter()
    proc = subprocess.run([LOOPX, *args], env=env, capture_output=True, text=True, check=True)
    return (time.perf_counter() - start) * 1000, proc.stdout


def main() -> None:
    """Measure and print."""
    env = {**os.environ, "LOOPX_NOW": "2026-11-29T12:00:00Z"}
    steps: dict[str, list[float]] = {
        "begin": [],
        "writeback": [],
        "spend": [],
        "closeout": [],
        "should-run": [],
    }
    totals = []
    with tempfile.TemporaryDirectory() as folder:
        for n in range(RUNS + 1):
            root = Path(folder) / f"p{n}"
            root.mkdir()
            project(root)
            base = ["--root", str(root)]
            who = ["-g", "g", "-a", "builder"]
            sr, _ = timed([*base, "quota", "should-run", *who], env)
            t1, out = timed([*base, "turn", "begin", *who, "-t", "t1"], env)
            key = json.loads(out)["turn_key"]
            t2, _ = timed(
                [*base, "writeback", *who, "-k", key, "-s", "done", "--validation-status", "passed"], env
            )
            t3, _ = timed([*base, "quota", "spend", *who, "-k", key], env)
            t4, _ = timed([*base, "todo", "complete", *who, "-t", "t1", "-k", key, "--no-follow-up"], env)
            if n == 0:
                continue  # warm-up
            for name, value in zip(steps, (t1, t2, t3, t4, sr), strict=True):
                steps[name].append(value)
            totals.append(t1 + t2 + t3 + t4)
    should_run = statistics.median(steps["should-run"])
    total = statistics.median(totals)
    print(f"runs: {RUNS} fresh projects (median wall time, whole process)")
    for name, values in steps.items():
        print(f"  {name:<11} {statistics.median(values):8.1f} ms")
    print(
        f"full CLI turn (begin+writeback+spend+closeout) {total:8.1f} ms   {total / should_run:4.2f}x one should-run"
    )


if __name__ == "__main__":
    main()
