"""Benchmark `loopx dashboard`: time to first byte and full render of its pages, on both stores.

The scenario: 100 goals x 100 todos, 10 agents, a 100,000-event ledger (1,000 spends per
goal over the last two days, half of them inside the 24 h window), and 20 settled turns
(journals, runs, history) on the goal whose page is measured. It is written with the stores'
own bulk writers (what `loopx store migrate` uses), the turns through the real settlement.

For each store a real `loopx dashboard` process serves it (PostgreSQL: a throw-away cluster,
tests/pg.py, private socket, fsync off), and each page is fetched BENCH_RUNS times over one
keep-alive connection after a first (cold) render: time to first byte (request sent -> status
line and headers read) and full render (-> last byte of the body). Then one goal changes and
the attention page is fetched once more (the other 99 goals' reads are kept), and the server's
CPU is measured while a page listens and nothing changes. Figures, not assertions: `python
benchmarks/dashboard.py` (`make bench`); docs/benchmarks.md holds a run's figures.
"""

from __future__ import annotations

import http.client
import os
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import NamedTuple

from loopx_core.clock import iso
from loopx_core.dashboard.security import Guard
from loopx_core.dashboard.watch import RACY_NS
from loopx_core.kernel.algebra import StepKind
from loopx_core.models.records import (
    AgentEntry,
    GoalEntry,
    GoalState,
    LedgerEvent,
    QuotaPolicy,
    Registry,
    Todo,
)
from loopx_core.ops import todos
from loopx_core.settlement.steps import TurnContext
from loopx_core.settlement.turns import begin_turn, settle_steps
from loopx_core.store.base import Store
from loopx_core.store.choice import open_store, open_target, record
from loopx_core.store.snapshot import GoalDump, Snapshot
from tests.browser import served_cli
from tests.conftest import T0

RUNS = int(os.environ.get("BENCH_RUNS", "15"))
GOALS = int(os.environ.get("BENCH_GOALS", "100"))
TODOS = int(os.environ.get("BENCH_TODOS", "100"))
EVENTS = int(os.environ.get("BENCH_EVENTS", "100000"))
AGENTS = 10
TURNS = 20
PAGES = ("/", "/goals/g000", "/agents")
BUDGETS = {"/": 150, "/goals/g000": 50}
"""Issue 28: median full render, ms (the agents page has none)."""
IDLE_SECONDS = float(os.environ.get("BENCH_IDLE_SECONDS", "10"))


def snapshot() -> Snapshot:
    """The scenario's registry, goal states and ledgers."""
    start = T0 - timedelta(days=3)
    agents = {
        f"a{n}": AgentEntry(
            agent_id=f"a{n}",
            capabilities=["python"],
            cadence_minutes=15,
            registered_at=start,
            updated_at=start,
        )
        for n in range(AGENTS)
    }
    goals = {
        f"g{n:03d}": GoalEntry(
            goal_id=f"g{n:03d}",
            objective=f"Goal number {n}",
            quota=QuotaPolicy(),
            created_at=start,
            updated_at=start,
        )
        for n in range(GOALS)
    }
    snap = Snapshot(registry=Registry(schema_version=1, goals=goals, agents=agents))
    per_goal = EVENTS // GOALS
    statuses = ("open", "open", "done", "blocked", "open")
    for n, goal_id in enumerate(goals):
        state = GoalState(
            schema_version=1,
            goal_id=goal_id,
            next_todo_number=TODOS + 1,
            todos=[
                Todo(
                    todo_id=f"t{i + 1}",
                    title=f"Todo {i + 1} of {goal_id}",
                    status=statuses[i % len(statuses)],  # type: ignore[arg-type]
                    priority=i % 10,
                    blocked_reason="waiting" if statuses[i % len(statuses)] == "blocked" else None,
                    created_at=start,
                    updated_at=start,
                )
                for i in range(TODOS)
            ],
        )
        step = timedelta(hours=48) / max(1, per_goal)
        events = [
            LedgerEvent(
                schema_version=1,
                event_id=f"e{i + 1}",
                seq=i + 1,
                kind="spend",
                at=T0 - timedelta(hours=48) + step * i,
                goal_id=goal_id,
                agent_id=f"a{(n + i) % AGENTS}",
                turn_instance_id=f"bench-{goal_id}-{i}",
                slots=1,
            )
            for i in range(per_goal)
        ]
        snap.goals[goal_id] = GoalDump(state=state, events=events)
    return snap


def settle_turns(store: Store) -> None:
    """20 real settled turns on g000: journals, runs and history for its timeline."""
    for i in range(TURNS):
        at = T0 - timedelta(minutes=5 * (TURNS - i))
        todo = todos.add_todo(store, "g000", f"Measured turn {i}", at)
        journal, _ = begin_turn(store, "g000", f"a{i % AGENTS}", at, todo_id=todo.todo_id)
        ctx = TurnContext(
            store,
            "g000",
            f"a{i % AGENTS}",
            journal.turn_key,
            lambda at=at: at,
            todo_id=todo.todo_id,
            summary=f"turn {i}",
            evidence=["bench"],
            validation_passed=True,
            changed_files=["x.py"],
            slots=1,
        )
        settle_steps(
            ctx, [StepKind.VALIDATION, StepKind.DURABLE_WRITEBACK, StepKind.QUOTA_SPEND], adapter="bench"
        )
        todos.complete_todo(store, "g000", todo.todo_id, at, agent_id=f"a{i % AGENTS}")


def build(kind: str, root: Path, cluster: object | None) -> None:
    """Write the scenario into a new project at `root` on the `kind` store."""
    root.mkdir(parents=True)
    (root / ".loopx").mkdir()
    snap = snapshot()
    if kind == "files":
        from loopx_core.store import files_bulk
        from loopx_core.store.files import FileStore

        store: Store = FileStore(root)
        files_bulk.write(store, snap)  # type: ignore[arg-type]
    else:
        from loopx_core.store.postgres import bulk

        dsn = cluster.fresh_schema()  # type: ignore[attr-defined]
        record(root, dsn)
        store = open_target(root, dsn)
        bulk.write(store, snap, replace=True)  # type: ignore[arg-type]
    settle_turns(store)


def fetch(conn: http.client.HTTPConnection, path: str, cookie: str) -> tuple[float, float, int]:
    """(ms to first byte, ms to the last byte, body bytes) of one GET."""
    started = time.perf_counter()
    conn.request("GET", path, headers={"Cookie": cookie})
    reply = conn.getresponse()
    first = time.perf_counter()
    body = reply.read()
    done = time.perf_counter()
    if reply.status != 200:
        raise SystemExit(f"GET {path}: {reply.status}")
    return (first - started) * 1000, (done - started) * 1000, len(body)


class Row(NamedTuple):
    """One page's figures on one store."""

    store: str
    page: str
    cold: float
    """The first render of a fresh server (nothing read yet), ms."""
    ttfb: float
    ttfb90: float
    full: float
    full90: float
    bytes: int


def measure(kind: str, root: Path) -> tuple[list[Row], float, float]:
    """Serve `root`; time each page, the attention page after one goal changes, and idle CPU."""
    rows = []
    with served_cli(root, env={"LOOPX_NOW": iso(T0)}, timeout=120) as site:
        guard = Guard(site.token, loopback_only=True)
        cookie = f"{guard.cookie_name}={site.token}"
        port = int(site.base.rsplit(":", 1)[1])
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        time.sleep(RACY_NS / 1e9)  # the scenario's last writes are older than a clock tick's doubt
        for path in PAGES:
            cold = fetch(conn, path, cookie)[1]
            samples = [fetch(conn, path, cookie) for _ in range(RUNS)]
            ttfb = [s[0] for s in samples]
            full = [s[1] for s in samples]
            rows.append(
                Row(
                    kind,
                    path,
                    cold,
                    statistics.median(ttfb),
                    _p90(ttfb),
                    statistics.median(full),
                    _p90(full),
                    samples[-1][2],
                )
            )
        todos.add_todo(open_store(root), "g050", "One goal changes", T0)
        changed = fetch(conn, "/", cookie)[1]
        conn.close()
        idle = idle_cpu(port, cookie, site.process)
    return rows, changed, idle


def idle_cpu(port: int, cookie: str, process: object) -> float:
    """Percent of one core the server uses over IDLE_SECONDS with a page open and nothing changing."""
    stream = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    stream.request("GET", "/events", headers={"Cookie": cookie})
    reply = stream.getresponse()
    reply.readline()  # the stream is open: the watcher now polls
    stat = Path(f"/proc/{process.pid}/stat")  # type: ignore[attr-defined]

    def cpu() -> float:
        fields = stat.read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    time.sleep(2)
    before, started = cpu(), time.perf_counter()
    time.sleep(IDLE_SECONDS)
    used, wall = cpu() - before, time.perf_counter() - started
    stream.close()
    return 100 * used / wall


def _p90(values: list[float]) -> float:
    return sorted(values)[max(0, round(0.9 * len(values)) - 1)]


def main() -> None:
    """Build both scenarios, measure, print a Markdown table."""
    from tests.pg import start_cluster, stop_cluster

    base = Path(tempfile.mkdtemp(prefix="loopx-bench-dashboard-", dir=os.environ.get("TMPDIR")))
    cluster = start_cluster()
    rows: list[Row] = []
    extra: dict[str, tuple[float, float]] = {}
    try:
        for kind in ("files", "postgresql"):
            started = time.perf_counter()
            build(kind, base / kind, cluster)
            print(f"{kind}: scenario written in {time.perf_counter() - started:.1f} s", file=sys.stderr)
            pages, changed, idle = measure(kind, base / kind)
            rows += pages
            extra[kind] = (changed, idle)
    finally:
        stop_cluster(cluster)
        import shutil

        shutil.rmtree(base, ignore_errors=True)
    print(
        f"\n{GOALS} goals x {TODOS} todos, {EVENTS:,} ledger events, {TURNS} turns; median (p90) of {RUNS} runs\n"
    )
    print("| store | page | first render ms | first byte ms | full render ms | bytes |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r.store} | `{r.page}` | {r.cold:.0f} | {r.ttfb:.0f} ({r.ttfb90:.0f}) "
            f"| {r.full:.0f} ({r.full90:.0f}) | {r.bytes:,} |"
        )
    print()
    for kind, (changed, idle) in extra.items():
        print(
            f"{kind}: attention page after one goal changes {changed:.0f} ms; idle page open {idle:.2f} % of a core"
        )
    print()
    for r in rows:
        budget = BUDGETS.get(r.page)
        if budget is not None:
            verdict = "met" if r.full <= budget else "NOT met"
            print(f"budget {r.store} `{r.page}` full render <= {budget} ms: {r.full:.0f} ms, {verdict}")
    for kind, (_, idle) in extra.items():
        verdict = "met" if idle <= 1 else "NOT met"
        print(f"budget {kind} idle page <= 1 % of a core: {idle:.2f} %, {verdict}")


if __name__ == "__main__":
    main()
