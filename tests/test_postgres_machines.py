"""Several machines, one PostgreSQL store: real `loopx` processes, each machine its own folder and home.

Each "machine" is a project folder and a HOME of its own whose `.loopx/store.json` names the
same database (a throw-away cluster started by the test run). What must hold across them:
one winner per todo, one spend per turn, no lost update, a lease taken over on one machine
refusing the settlement of another, and exactly once through a killed connection and a
server restart.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from loopx_core.kernel.algebra import StepKind
from loopx_core.ops import goals, todos
from loopx_core.store.choice import open_target
from loopx_core.store.postgres import PostgresStore
from tests.builders import settle_turn
from tests.conftest import T0, T0_ISO
from tests.pg import Cluster, Machine, cluster_fixture, finish, machines  # noqa: F401  (the session fixture pg_cluster)

pytestmark = pytest.mark.slow
RUN_ONCE = ("--host-command", "true", "--validation-command", "true")


def at(minutes: float) -> str:
    """T0 plus `minutes`, as LOOPX_NOW takes it."""
    return (T0 + timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture
def team(tmp_path: Path, pg_cluster: Cluster) -> Iterator[tuple[str, PostgresStore]]:
    """A team store with goal `demo`: its DSN and an in-process view of it (for setup and checks)."""
    dsn = pg_cluster.fresh_schema()
    store = open_target(tmp_path / "observer", dsn)
    assert isinstance(store, PostgresStore)
    store.init()
    goals.add_goal(store, "demo", "Ship", T0)
    yield dsn, store
    store.close()


def spends(store: PostgresStore) -> list[str]:
    """The turn instance of every spend in the ledger."""
    return [e.turn_instance_id or "" for e in store.ledger_all("demo") if e.kind == "spend"]


def committed_turns(store: PostgresStore) -> list[str]:
    """The turn instance of every committed journal."""
    rows = store.session.read(lambda c: c.execute("SELECT doc::text FROM loopx_journals").fetchall())
    docs = [json.loads(r[0]) for r in rows]
    return [d["identity"]["turn_instance_id"] for d in docs if d["status"] == "committed"]


def test_eight_machines_race_for_one_todo_and_one_wins(
    tmp_path: Path, team: tuple[str, PostgresStore]
) -> None:
    dsn, store = team
    fleet = [Machine(tmp_path, f"m{n}", dsn) for n in range(1, 9)]
    inits = finish([m.start("init", "--store", dsn, "-f", "json") for m in fleet])  # the real join
    assert [json.loads(out)["created"] for _, out, _ in inits] == [False] * 8
    for n in range(1, 9):
        goals.register_agent(store, f"a{n}", [], T0)
    todos.add_todo(store, "demo", "The one todo", T0)
    procs = [
        m.start("todo", "claim", "-g", "demo", "-t", "t1", "-a", f"a{n}", now=T0_ISO, LOOPX_RACE_WINDOW="0.3")
        for n, m in enumerate(fleet, start=1)
    ]
    results = finish(procs)
    codes = sorted(code for code, _, _ in results)
    assert codes == [0] + [5] * 7, [err for _, _, err in results]
    winner = next(json.loads(out)["claimed_by"] for code, out, _ in results if code == 0)
    assert store.read_goal("demo").todo("t1").claimed_by == winner  # type: ignore[union-attr]


def test_eight_machines_settle_one_turn_and_it_is_charged_once(
    tmp_path: Path, team: tuple[str, PostgresStore]
) -> None:
    dsn, store = team
    goals.register_agent(store, "a1", [], T0)
    todos.add_todo(store, "demo", "Todo", T0)
    journal = settle_turn(
        store, "a1", "t1", goal="demo", steps=(StepKind.VALIDATION, StepKind.DURABLE_WRITEBACK)
    )
    fleet = machines(tmp_path, dsn, 8)
    procs = [
        m.start(
            "quota",
            "spend",
            "-g",
            "demo",
            "-a",
            "a1",
            "-k",
            journal.turn_key,
            now=at(5),
            LOOPX_RACE_WINDOW="0.2",
        )
        for m in fleet
    ]
    results = finish(procs)
    assert [code for code, _, _ in results] == [0] * 8, [err for _, _, err in results]
    assert spends(store) == [journal.identity["turn_instance_id"]]
    receipts = [json.loads(out)["receipts"][-1] for _, out, _ in results]
    assert len({r["detail"]["event_id"] for r in receipts}) == 1  # every machine answers with the one receipt
    assert sorted(r["replayed"] for r in receipts) == [False] + [True] * 7


def agent_loop(machine: Machine, agent: str, turns: int, *, budget_s: float = 180) -> list[int]:
    """Settle `turns` turns with `loopx turn run-once`, retrying what a real host would retry.

    exit 6 (store unavailable, lock timeout) and 5 (conflict) run again; an open turn left by
    a failed attempt is resumed (`--resume`). Returns every exit code seen.
    """
    codes: list[int] = []
    done, resume, deadline = 0, False, time.monotonic() + budget_s
    while done < turns:
        assert time.monotonic() < deadline, f"{agent}: {done}/{turns} turns, codes {codes}"
        args = ["turn", "run-once", "-g", "demo", "-a", agent, *RUN_ONCE, *(["--resume"] if resume else [])]
        result = machine.run(*args)
        codes.append(result.returncode)
        assert "/tmp" not in result.stderr and "Traceback" not in result.stderr, result.stderr
        if result.returncode == 0:
            assert json.loads(result.stdout).get("status") != "skipped", result.stdout
            done, resume = done + 1, False
        elif result.returncode == 7 and "open turn" in result.stderr:
            resume = True
        elif result.returncode == 3 and resume:
            resume = False  # the failed attempt left no open turn after all
        elif result.returncode not in (5, 6):
            raise AssertionError(f"{agent}: exit {result.returncode}: {result.stderr}")
    return codes


def test_four_agents_twenty_five_turns_each_lose_no_update(
    tmp_path: Path, team: tuple[str, PostgresStore]
) -> None:
    dsn, store = team
    fleet = machines(tmp_path, dsn, 4)
    for n in range(1, 5):
        goals.register_agent(store, f"a{n}", [], T0)
    for i in range(25):
        for n in range(1, 5):
            todos.add_todo(store, "demo", f"Todo {i} of a{n}", T0, bound_agent=f"a{n}")
    threads = [
        threading.Thread(target=agent_loop, args=(m, f"a{n}", 25)) for n, m in enumerate(fleet, start=1)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    state = store.read_goal("demo")
    assert sum(t.status == "done" for t in state.todos) == 100
    assert len(spends(store)) == 100 and len(set(spends(store))) == 100
    assert sorted(spends(store)) == sorted(committed_turns(store))
    assert len(store.read_history("demo")) == 100


def test_a_lease_taken_over_on_another_machine_refuses_the_first_settlement(
    tmp_path: Path, team: tuple[str, PostgresStore]
) -> None:
    dsn, store = team
    laptop, server = machines(tmp_path, dsn, 2)
    goals.register_agent(store, "laptop-agent", [], T0)
    goals.register_agent(store, "server-agent", [], T0)
    todos.add_todo(store, "demo", "Contested", T0)
    first = laptop.run(
        "turn", "begin", "-g", "demo", "-a", "laptop-agent", "-t", "t1", "--lease-minutes", "1", now=at(0)
    )
    assert first.returncode == 0, first.stderr
    key = json.loads(first.stdout)["turn_key"]
    taken = server.run("turn", "begin", "-g", "demo", "-a", "server-agent", "-t", "t1", now=at(5))
    assert taken.returncode == 0, taken.stderr  # the lease expired: taken over
    late = laptop.run(
        "writeback",
        "-g",
        "demo",
        "-a",
        "laptop-agent",
        "-k",
        key,
        "-s",
        "late",
        "--validation-status",
        "passed",
        now=at(6),
    )
    assert late.returncode == 19, late.stderr  # lease_lost
    assert spends(store) == []
    assert store.read_goal("demo").todo("t1").claimed_by == "server-agent"  # type: ignore[union-attr]


def test_a_connection_killed_mid_spend_rolls_back_and_the_retry_charges_once(
    tmp_path: Path,
    team: tuple[str, PostgresStore],
    pg_cluster: Cluster,
) -> None:
    dsn, store = team
    (machine,) = machines(tmp_path, dsn, 1)
    goals.register_agent(store, "a1", [], T0)
    todos.add_todo(store, "demo", "Todo", T0)
    journal = settle_turn(
        store, "a1", "t1", goal="demo", steps=(StepKind.VALIDATION, StepKind.DURABLE_WRITEBACK)
    )
    spending = machine.start(
        "quota", "spend", "-g", "demo", "-a", "a1", "-k", journal.turn_key, LOOPX_RACE_WINDOW="3"
    )
    killed, deadline = 0, time.monotonic() + 60
    while not killed and time.monotonic() < deadline:  # the spend holds its transaction open: kill it there
        killed = pg_cluster.terminate_backends("%loopx_events%turn_instance_id%")
        time.sleep(0.05)
    code, _, err = finish([spending])[0]
    assert killed and code == 6, err
    assert "store_unavailable" in err or "connection" in err
    assert "/tmp" not in err
    assert spends(store) == []  # rolled back: nothing half-written
    retry = machine.run("quota", "spend", "-g", "demo", "-a", "a1", "-k", journal.turn_key)
    again = machine.run("quota", "spend", "-g", "demo", "-a", "a1", "-k", journal.turn_key)
    assert (retry.returncode, again.returncode) == (0, 0), retry.stderr + again.stderr
    assert spends(store) == [journal.identity["turn_instance_id"]]


def test_the_server_restarted_mid_loop_leaves_spends_equal_to_settled_turns(
    tmp_path: Path,
    team: tuple[str, PostgresStore],
    pg_cluster: Cluster,
) -> None:
    dsn, store = team
    first, second = machines(tmp_path, dsn, 2)
    for n in (1, 2):
        goals.register_agent(store, f"a{n}", [], T0)
    for i in range(8):
        for n in (1, 2):
            todos.add_todo(store, "demo", f"Todo {i} of a{n}", T0, bound_agent=f"a{n}")
    seen: dict[str, list[int]] = {}
    threads = [
        threading.Thread(target=lambda m=m, a=a: seen.__setitem__(a, agent_loop(m, a, 8)))
        for m, a in ((first, "a1"), (second, "a2"))
    ]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 120
    while len(spends(store)) < 4 and time.monotonic() < deadline:
        time.sleep(0.1)
    before = len(spends(store))
    pg_cluster.restart("immediate")  # a crash mid-loop: every connection cut; committed state stays
    assert 4 <= before < 16  # the restart came mid-loop
    for t in threads:
        t.join(300)
    assert set(seen) == {"a1", "a2"}
    assert len(spends(store)) == 16 and len(set(spends(store))) == 16
    assert sorted(spends(store)) == sorted(committed_turns(store))


def test_every_acknowledged_spend_survives_a_server_crash(tmp_path: Path, pg_cluster: Cluster) -> None:
    """Spends acknowledged to LoopX, then the server crashes (`pg_ctl stop -m immediate`): after
    recovery every one is there, in order, each once."""
    from loopx_core.ops import spend

    dsn = pg_cluster.fresh_schema()
    acknowledged = 0
    for rounds, count in enumerate((1, 4, 9)):
        store = open_target(tmp_path / f"m{rounds}", dsn)
        assert isinstance(store, PostgresStore)
        if rounds == 0:
            store.init()
            goals.add_goal(store, "demo", "Ship", T0)
            goals.register_agent(store, "a1", [], T0)
        for _ in range(count):
            spend.spend(store, "demo", "a1", T0, slots=1)
            acknowledged += 1
        pg_cluster.restart("immediate")
        store.close()
        after = open_target(tmp_path / f"m{rounds}", dsn)
        events = after.ledger_all("demo")
        after.close()
        assert [e.seq for e in events] == list(range(1, acknowledged + 1))
