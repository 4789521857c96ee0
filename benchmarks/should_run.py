"""Benchmark the should-run hot path (run by hand: `make bench`); prints figures and ratios.

Measured in one run, in this environment:
- whole-process wall time of `loopx quota should-run` against `python -c pass`;
- should-run on an empty ledger against a ledger of 100,000 events and 1,000 todos
  (budget: at most 1.3x);
- the packet's size in bytes for the demo scenario (budget: under 3 KB);
- which heavy modules the hot path imports (budget: none of jinja2, tomlkit, mcp, typer, pluggy).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from loopx_core.models import codec
from loopx_core.models.constants import SCHEMA_VERSION
from loopx_core.models.records import LedgerEvent, Todo
from loopx_core.ops import goals, todos
from loopx_core.store.files import FileStore

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
LOOPX = str(Path(sys.executable).parent / "loopx")
RUNS = int(os.environ.get("BENCH_RUNS", "21"))


def wall(cmd: list[str], env: dict[str, str]) -> float:
    """Median wall time of `cmd` over RUNS runs (after one warm-up), in milliseconds."""
    subprocess.run(cmd, env=env, capture_output=True, check=False)
    samples = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run(cmd, env=env, capture_output=True, check=False)
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def demo_project(root: Path) -> FileStore:
    """The demo scenario: goal `parser`, two agents, four todos."""
    store = FileStore(root)
    store.init()
    goals.add_goal(store, "parser", "Ship a tested parser", NOW, compute=0.5)
    goals.register_agent(store, "builder", ["python", "shell"], NOW)
    goals.register_agent(store, "reviewer", ["review"], NOW)
    todos.add_todo(
        store,
        "parser",
        "Deploy to staging",
        NOW,
        priority=0,
        required_capabilities=["deploy"],
        excluded_agents=["builder"],
    )
    todos.add_todo(store, "parser", "Write the tokenizer", NOW, priority=1, required_capabilities=["python"])
    todos.add_todo(store, "parser", "Write the grammar", NOW, priority=2, required_capabilities=["python"])
    return store


def big_history(store: FileStore, events: int = 100_000, extra_todos: int = 1_000) -> None:
    """Append `events` spends spread over the past (about 1.5 per minute back in time) and many done todos."""
    lines = []
    start = NOW - timedelta(minutes=events * 1.5)
    for seq in range(1, events + 1):
        event = LedgerEvent(
            schema_version=SCHEMA_VERSION,
            event_id=f"ev-{seq}",
            seq=seq,
            kind="spend",
            at=start + timedelta(minutes=seq * 1.5),
            goal_id="parser",
            agent_id="builder" if seq % 2 else "reviewer",
            todo_id=f"t{seq % 900 + 10}",
            turn_instance_id=f"ti-{seq:016x}",
            slots=1,
            duration_seconds=42.0,
        )
        lines.append(codec.line(event, exclude_none=True).decode())
    store.ledger_path("parser").write_text("\n".join(lines) + "\n")

    def grow(state):  # type: ignore[no-untyped-def]
        for n in range(extra_todos):
            state.todos.append(
                Todo(
                    todo_id=f"d{n}",
                    title=f"Finished task {n}",
                    status="done",
                    evidence=["ok"],
                    created_at=NOW,
                    updated_at=NOW,
                )
            )

    store.update_goal("parser", grow)


def hot_imports(root: Path, env: dict[str, str]) -> list[str]:
    """Heavy modules present after one in-process should-run."""
    code = (
        "import sys\nfrom loopx_core.cli.entry import main\n"
        "try:\n    main(['quota','should-run','-g','parser','-a','builder'])\nexcept SystemExit:\n    pass\n"
        "heavy = ('typer','click','rich','jinja2','tomlkit','mcp','pluggy')\n"
        "print(','.join(sorted({m.split('.')[0] for m in sys.modules if m.split('.')[0] in heavy})), file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    last = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ""
    return [m for m in last.split(",") if m]


def in_process(root: Path, repeats: int = 30) -> float:
    """Median milliseconds of load + decide inside one warm process (no start-up noise)."""
    from loopx_core.decide.packet import build_packet, load_inputs

    store = FileStore(root)
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        build_packet(load_inputs(store, "parser", "builder", NOW))
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def main() -> None:
    """Measure and print."""
    with tempfile.TemporaryDirectory() as small_dir, tempfile.TemporaryDirectory() as big_dir:
        small, big = Path(small_dir), Path(big_dir)
        demo_project(small)
        big_store = demo_project(big)
        big_history(big_store)
        env = {**os.environ, "LOOPX_NOW": NOW.isoformat()}
        should_run = ["quota", "should-run", "-g", "parser", "-a", "builder"]

        packet = subprocess.run(
            [LOOPX, "--root", str(small), *should_run], env=env, capture_output=True, check=True
        ).stdout
        packet_bytes = len(packet.rstrip(b"\n"))
        big_packet = json.loads(
            subprocess.run(
                [LOOPX, "--root", str(big), *should_run], env=env, capture_output=True, check=True
            ).stdout
        )

        base = wall([sys.executable, "-c", "pass"], env)
        empty = wall([LOOPX, "--root", str(small), *should_run], env)
        loaded = wall([LOOPX, "--root", str(big), *should_run], env)
        typer_path = wall([LOOPX, "--root", str(small), *should_run], {**env, "LOOPX_NO_FAST_PATH": "1"})
        imports = hot_imports(small, {**env, "LOOPX_ROOT": str(small)})
        ledger_mb = big_store.ledger_path("parser").stat().st_size / 1e6
        warm_small, warm_big = in_process(small), in_process(big)

        print(f"runs per figure: {RUNS} (median wall time, whole process)")
        print(f"python -c pass                          {base:8.1f} ms")
        print(
            f"should-run, empty ledger                {empty:8.1f} ms   {empty / base:5.1f}x python -c pass"
        )
        print(
            f"should-run, typer path (no fast entry)  {typer_path:8.1f} ms   {typer_path / empty:5.2f}x fast entry"
        )
        print(
            f"should-run, 100,000 events ({ledger_mb:.1f} MB) + 1,000 todos {loaded:8.1f} ms   "
            f"{loaded / empty:5.2f}x empty (budget 1.30x)  spent {big_packet['quota']['spent_slots']} slots in window"
        )
        print(
            f"load + decide in a warm process: empty {warm_small:.1f} ms, 100,000 events + 1,000 todos {warm_big:.1f} ms"
        )
        print(f"packet size, demo scenario              {packet_bytes:8d} B    (budget 3072 B)")
        print(f"heavy modules imported by should-run    {', '.join(imports) or 'none'}")
        ok = loaded / empty <= 1.3 and packet_bytes < 3072 and not imports
        print("budgets:", "met" if ok else "NOT MET")


if __name__ == "__main__":
    main()
