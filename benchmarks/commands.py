"""What a person types (issue 28), each a ratio to `python -c pass` measured in the same rounds.

`make bench` runs it (BENCH_ROUNDS changes the rounds; BENCH_SIZES the goal counts). Through
the installed console script, LoopX's modules compiled to bytecode first:
- every read-only command on a small project (1 goal, 40 todos; goal <= 8x);
- every state-changing command a person types (goal <= 12x);
- `loopx status` over 10, 100 and 1,000 goals of 10 todos each (goal: 1,000 goals <= 0.5 s, and
  linear: 10x the goals <= 11x the time).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
from itertools import count, pairwise
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import LOOPX, Run, compile_first, header, paired, run
from benchmarks.hot_path import small_project
from benchmarks.scenario import many_goals
from tests.conftest import T0, T0_ISO

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "15"))
SIZES = [int(n) for n in os.environ.get("BENCH_SIZES", "10,100,1000").split(",")]
ENV = {**os.environ, "LOOPX_NOW": T0_ISO}
READS = [
    ["status"],
    ["goal", "list"],
    ["goal", "show", "-g", "parser"],
    ["todo", "list", "-g", "parser"],
    ["agent", "list"],
    ["agent", "show", "-a", "builder"],
    ["history"],
    ["health", "list"],
    ["hosts", "list"],
    ["quota", "status", "-g", "parser"],
    ["doctor"],
    ["--help"],
]
"""The read-only commands (goal <= 8x)."""


def loopx(root: Path, *args: str) -> Run:
    """One `loopx --root ROOT ...` process (JSON: its stdout is a pipe)."""
    done = run([LOOPX, "--root", str(root), *args], ENV)
    if done.code != 0:
        raise SystemExit(f"loopx {' '.join(args)} failed ({done.code})")
    return done


def writes(root: Path) -> dict[str, object]:
    """The state-changing commands (goal <= 12x), each on something new every round."""
    numbers = count(1)
    todo = count(1)
    return {
        "todo add": lambda: loopx(root, "todo", "add", "-g", "parser", "--title", "More work").ms,
        "goal add": lambda: loopx(root, "goal", "add", "-g", f"g{next(numbers)}", "--objective", "x").ms,
        "todo claim": lambda: (
            loopx(root, "todo", "claim", "-g", "parser", "-t", f"t{next(todo)}", "-a", "builder").ms
        ),
        "quota spend --manual": lambda: (
            loopx(root, "quota", "spend", "-g", "parser", "-a", "builder", "--manual", "--slots", "1").ms
        ),
    }


def growth(folder: Path) -> list[tuple[int, float]]:
    """Median `loopx status` milliseconds over each number of goals (10 todos each)."""
    rows = []
    for size in SIZES:
        root = folder / f"goals{size}"
        many_goals(root, size, 10, T0)
        rows.append((size, statistics.median(loopx(root, "status").ms for _ in range(5))))
    return rows


def main() -> None:
    """Measure and print every figure."""
    print(compile_first())
    with tempfile.TemporaryDirectory(prefix="loopx-bench-") as tmp:
        folder = Path(tmp)
        small = small_project(folder / "small")
        header("read-only commands, small project", ROUNDS)
        series = paired({" ".join(a): (lambda a=a: loopx(small, *a).ms) for a in READS}, ROUNDS)
        base = series["python -c pass"]
        for s in series.values():
            print(s.line(base if s is not base else None, budget="" if s is base else "<= 8x"))
        header("state-changing commands, small project", ROUNDS)
        series = paired(writes(small_project(folder / "writes")), ROUNDS)  # type: ignore[arg-type]
        base = series["python -c pass"]
        for s in series.values():
            print(s.line(base if s is not base else None, budget="" if s is base else "<= 12x"))
        print("\n`loopx status` over goals of 10 todos each (median of 5)")
        rows = growth(folder)
        for size, ms in rows:
            print(f"  {size:>6} goals {ms:9.1f} ms   {ms / size:7.3f} ms a goal")
        for (small_n, small_ms), (big_n, big_ms) in pairwise(rows):
            print(
                f"  {big_n // small_n}x the goals ({small_n} -> {big_n}): {big_ms / small_ms:.2f}x the time"
                f"   (goal <= {1.1 * big_n / small_n:.0f}x)"
            )
        if 1000 in SIZES:
            print(f"  1,000 goals: {dict(rows)[1000]:.0f} ms   (goal <= 500 ms)")


if __name__ == "__main__":
    main()
