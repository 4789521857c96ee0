"""The hot path's budgets (issue 26), each a ratio measured in the same paired rounds.

`make bench` runs it (BENCH_ROUNDS changes the rounds). Through the installed console script,
LoopX's modules compiled to bytecode first (`harness.compile_first`):
- `quota should-run` and `hook claude-stop` on a small project (1 goal, 40 todos; goal <= 3x
  `python -c pass`) and a big one (200 todos, 2,000 spends in the window; goal <= 4x);
- should-run's peak memory, and 100,000 events against an empty ledger (the same 1,000 todos);
- a whole `turn run-once` with a trivial host command (goal <= 0.5 s);
- should-run on the PostgreSQL store against `python -c "import psycopg"` (goal <= 1.3x), on
  both projects copied into a throw-away cluster.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import LOOPX, Run, Series, compile_first, header, paired, run
from benchmarks.scenario import big_goal
from loopx_core.ops import goals, todos
from loopx_core.store.files import FileStore
from tests.conftest import T0, T0_ISO

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "15"))
ENV = {**os.environ, "LOOPX_NOW": T0_ISO}
WHO = ["-g", "parser", "-a", "builder"]
PEAK = "import resource, subprocess, sys; subprocess.run(sys.argv[1:], capture_output=True); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
STOP = json.dumps({"session_id": "bench", "stop_hook_active": False}).encode()


def loopx(root: Path, *args: str, stdin: bytes = b"") -> Run:
    """One `loopx --root ROOT ...` process."""
    return run([LOOPX, "--root", str(root), *args], ENV, stdin)


def peak_mib(argv: list[str]) -> float:
    """Peak resident memory of `argv`, in MiB, from a small fresh parent (not this large one)."""
    proc = subprocess.run([sys.executable, "-S", "-c", PEAK, *argv], env=ENV, capture_output=True, check=True)
    return int(proc.stdout) / 1024


def small_project(root: Path) -> Path:
    """1 goal (`parser`), 1 agent (`builder`), 40 todos."""
    store = FileStore(root)
    store.init()
    goals.add_goal(store, "parser", "Ship a tested parser", T0, compute=0.5)
    goals.register_agent(store, "builder", ["python"], T0)
    for n in range(40):
        todos.add_todo(store, "parser", f"Task {n + 1}", T0)
    return root


def ticks(small: Path, big: Path) -> dict[str, Series]:
    """should-run and the Stop hook on both projects."""
    steps = {
        "should-run, small (40 todos)": lambda: loopx(small, "quota", "should-run", *WHO).ms,
        "hook claude-stop, small": lambda: loopx(small, "hook", "claude-stop", *WHO, stdin=STOP).ms,
        "should-run, big (200 todos, 2,000 spends)": lambda: loopx(big, "quota", "should-run", *WHO).ms,
        "hook claude-stop, big": lambda: loopx(big, "hook", "claude-stop", *WHO, stdin=STOP).ms,
    }
    return paired(steps, ROUNDS)


def turns(folder: Path) -> Series:
    """A whole `turn run-once` (host command and validation `true`): each round settles the next todo."""
    root = small_project(folder / "turns")
    series = Series("turn run-once (trivial host command)")
    for n in range(ROUNDS + 1):
        result = loopx(
            root, "turn", "run-once", *WHO, "--host-command", "true", "--validation-command", "true"
        )
        if result.code != 0:
            raise SystemExit(f"turn run-once failed ({result.code})")
        if n:
            series.samples.append(result.ms)
    return series


def flatness(folder: Path) -> tuple[float, list[float]]:
    """100,000 events against an empty ledger (both with 1,000 todos), and the big tick's peak memory."""
    huge, empty = folder / "huge", folder / "empty"
    huge.mkdir()
    empty.mkdir()
    big_goal(huge, T0, todos_open=1_000, spends=100_000, hours=2_500)
    big_goal(empty, T0, todos_open=1_000, spends=0)
    series = paired(
        {
            "huge": lambda: loopx(huge, "quota", "should-run", *WHO).ms,
            "empty": lambda: loopx(empty, "quota", "should-run", *WHO).ms,
        },
        ROUNDS,
    )
    peaks = [peak_mib([LOOPX, "--root", str(huge), "quota", "should-run", *WHO]) for _ in range(5)]
    return series["huge"].median / series["empty"].median, peaks


def postgres(folder: Path, small: Path, big: Path) -> list[str]:
    """should-run on both projects copied into PostgreSQL, against importing psycopg."""
    from tests.pg import server_bin, start_cluster, stop_cluster

    if server_bin() is None:
        return ["  PostgreSQL: server binaries not installed (scripts/postgres.sh installs them): skipped"]
    from loopx_core.store.choice import open_target, record
    from loopx_core.store.migrate import migrate

    cluster = start_cluster()
    try:
        copies = {}
        for name, source in (("small", small), ("big", big)):
            root = folder / f"pg-{name}"
            root.mkdir()
            target = cluster.fresh_schema()
            team = open_target(root, target)
            migrate(FileStore(source), team)
            record(root, target)
            team.close()  # type: ignore[attr-defined]
            copies[name] = root
        series = paired(
            {
                'python -c "import psycopg"': lambda: run([sys.executable, "-c", "import psycopg"], ENV).ms,
                "should-run small, postgresql": lambda: (
                    loopx(copies["small"], "quota", "should-run", *WHO).ms
                ),
                "should-run big, postgresql": lambda: loopx(copies["big"], "quota", "should-run", *WHO).ms,
                "hook claude-stop small, postgresql": lambda: (
                    loopx(copies["small"], "hook", "claude-stop", *WHO, stdin=STOP).ms
                ),
            },
            ROUNDS,
        )
    finally:
        stop_cluster(cluster)
    floor = series['python -c "import psycopg"']
    lines = [series["python -c pass"].line(None), floor.line(series["python -c pass"])]
    for name, s in series.items():
        if name.startswith(("should-run", "hook")):
            lines.append(s.line(floor, budget="<= 1.3x import psycopg" if "should-run" in name else ""))
    return lines


def main() -> None:
    """Measure and print every figure."""
    print(compile_first())
    with tempfile.TemporaryDirectory(prefix="loopx-bench-") as tmp:
        folder = Path(tmp)
        small = small_project(folder / "small")
        big = folder / "big"
        big.mkdir()
        big_goal(big, T0)
        header("a host's tick", ROUNDS)
        series = ticks(small, big)
        base = series["python -c pass"]
        for s in series.values():
            budget = "" if s is base else "<= 3x" if "small" in s.name else "<= 4x"
            print(s.line(base if s is not base else None, budget=budget))
        ratio, peaks = flatness(folder)
        print(f"  100,000 events / empty ledger, both with 1,000 todos = {ratio:.2f}x   (goal <= 1.3x)")
        print(f"  should-run peak memory (100,000 events): median {statistics.median(peaks):.1f} MiB")
        header("a whole turn in one process", ROUNDS)
        print(turns(folder).line(None, budget="<= 500 ms"))
        header("PostgreSQL store against importing psycopg", ROUNDS)
        for line in postgres(folder, small, big):
            print(line)


if __name__ == "__main__":
    main()
