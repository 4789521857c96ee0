"""What tracing costs a turn (issue 30): `loopx turn run-once` untraced, traced to a local
OTLP/HTTP receiver, and traced to a collector that is down, each beside `python -c pass` in the
same rounds (ratios of medians), through the installed console script with bytecode compiled.

`make bench` runs it (BENCH_ROUNDS changes the rounds). Untraced, nothing of OpenTelemetry is
imported (tests/test_tracing.py); the traced figures are the price of the SDK's import, the
spans and the flush at exit; the down collector's adds the bounded wait for the export.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import LOOPX, compile_first, header, paired, run
from tests.builders import build_project
from tests.otlp import receiving

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "7"))
TODOS = 200
"""Enough todos for every round (each run-once completes one)."""


def turn(root: Path, env: dict[str, str]) -> Callable[[], float]:
    """One `run-once` per call, against `root`."""
    argv = [LOOPX, "--root", str(root), "turn", "run-once", "-g", "g", "-a", "builder"]
    argv += ["--host-command", "true", "--validation-command", "true", "-f", "json"]

    def step() -> float:
        done = run(argv, env)
        if done.code != 0:
            raise SystemExit(f"run-once exited {done.code}")
        return done.ms

    return step


def main() -> None:
    """Print the three figures."""
    print(compile_first())
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "LOOPX_"))}
    with tempfile.TemporaryDirectory() as tmp, receiving() as receiver:
        roots = {name: Path(tmp) / name for name in ("off", "on", "down")}
        for root in roots.values():
            build_project(root, todo_count=TODOS)
        envs = {
            "off": base,
            "on": {**base, "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint},
            "down": {**base, "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"},
        }
        steps = {
            "run-once, untraced": turn(roots["off"], envs["off"]),
            "run-once, traced": turn(roots["on"], envs["on"]),
            "run-once, collector down": turn(roots["down"], envs["down"]),
        }
        series = paired(steps, ROUNDS)
        spans = len(receiver.spans)
    header("A turn with and without traces", ROUNDS)
    baseline = series["python -c pass"]
    print(baseline.line(None))
    for name in steps:
        print(series[name].line(baseline))
    off, on = series["run-once, untraced"].median, series["run-once, traced"].median
    print(
        f"tracing adds {on - off:.0f} ms a turn ({on / off:.2f}x the untraced turn); {spans} spans received"
    )


if __name__ == "__main__":
    main()
