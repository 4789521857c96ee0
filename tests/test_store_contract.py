"""One store contract, run against both stores: the file store and the PostgreSQL store.

Every promise of `loopx_core.store.base.Store` is checked the same way on each: lifecycle,
validated reads, compare-and-swap, the per-goal lock (re-entrant in a thread, exclusive
across threads), the append-only ledger, exactly-once receipts, journals, runs and the
scheduler state; and a generated sequence of operations leaves both stores in the same
state (same counts and checksum), so nothing the engine does can tell them apart.
"""

from __future__ import annotations

import inspect
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from loopx_core.errors import ConflictError, LockTimeoutError, NotFoundError, UsageError
from loopx_core.models.constants import SCHEMA_VERSION
from loopx_core.models.records import (
    GoalState,
    LedgerEvent,
    RunIndexEntry,
    SchedulerEntry,
    SchedulerState,
    TurnJournal,
)
from loopx_core.ops import spend, todos
from loopx_core.store.base import Store
from loopx_core.store.files import FileStore
from loopx_core.store.migrate import read as snapshot_of
from loopx_core.store.postgres import PostgresStore
from tests.builders import settle_turn
from tests.conftest import T0
from tests.pg import Cluster, cluster_fixture  # noqa: F401  (the session fixture pg_cluster)
from tests.store_ops import OPERATIONS, apply, with_goal

KINDS = ("files", "postgresql")
KEY = "sha256:" + "a" * 64


def make_store(kind: str, root: Path, cluster: Cluster) -> Store:
    """An initialised, empty store of `kind` for the project at `root`."""
    root.mkdir(parents=True, exist_ok=True)
    store: Store = FileStore(root) if kind == "files" else PostgresStore(root, cluster.fresh_schema(), "pg")
    assert store.init() is True
    return store


@pytest.fixture(params=KINDS)
def store(request: pytest.FixtureRequest, tmp_path: Path, pg_cluster: Cluster) -> Iterator[Store]:
    """An initialised, empty store of each kind."""
    made = make_store(request.param, tmp_path / "project", pg_cluster)
    yield made
    if isinstance(made, PostgresStore):
        made.close()


def event(seq: int, *, at_minutes: float = 0, turn: str | None = None, kind: str = "spend") -> LedgerEvent:
    """A ledger event of the test goal."""
    return LedgerEvent(
        schema_version=SCHEMA_VERSION,
        event_id=f"ev-{seq}",
        seq=seq,
        kind=kind,  # type: ignore[arg-type]
        at=T0 + timedelta(minutes=at_minutes),
        goal_id="g",
        agent_id="a",
        turn_instance_id=turn,
        voids_event_id="ev-1" if kind == "void" else None,
        slots=1,
    )


def journal(key: str = KEY) -> TurnJournal:
    """An open journal of the test goal."""
    identity = {
        "goal_id": "g",
        "agent_id": "a",
        "todo_id": "t1",
        "turn_instance_id": "ti-1",
        "replan_obligation_id": None,
    }
    return TurnJournal(
        schema_version=1,
        turn_key=key,
        goal_id="g",
        agent_id="a",
        identity=identity,
        started_at=T0,
        updated_at=T0,
    )


def test_the_postgres_store_implements_the_whole_store_interface() -> None:
    wanted = {n for n, v in vars(Store).items() if callable(v) and not n.startswith("_")}
    for name in sorted(wanted):
        assert inspect.signature(getattr(PostgresStore, name)) == inspect.signature(getattr(Store, name)), (
            name
        )


def test_lifecycle(store: Store) -> None:
    assert store.is_initialized()
    assert store.init() is False  # a second init writes nothing
    assert store.read_registry().goals == {}
    assert store.label in ("files", "pg")


def test_registry_updates_are_all_or_nothing(store: Store) -> None:
    with_goal(store)
    assert store.update_registry(lambda r: sorted(r.goals)) == ["g"]

    def broken(registry: object) -> None:
        registry.goals["g"].objective = "changed"  # type: ignore[attr-defined]
        raise RuntimeError("change failed")

    with pytest.raises(RuntimeError):
        store.update_registry(broken)
    assert store.read_registry().goals["g"].objective == "Objective"


def test_goal_state_compare_and_swap(store: Store) -> None:
    with_goal(store)
    with pytest.raises(ConflictError):
        store.create_goal(GoalState(schema_version=1, goal_id="g"))
    with pytest.raises(NotFoundError):
        store.read_goal("missing")
    version = store.read_goal("g").version
    assert store.update_goal("g", lambda s: s.evidence.append("one"), expect_version=version) is None
    assert store.read_goal("g").version == version + 1
    with pytest.raises(ConflictError, match="moved"):
        store.update_goal("g", lambda s: s.evidence.append("stale"), expect_version=version)

    def broken(state: GoalState) -> None:
        state.evidence.append("half")
        raise RuntimeError("no")

    with pytest.raises(RuntimeError):
        store.update_goal("g", broken)
    state = store.read_goal("g")
    assert (state.version, state.evidence) == (version + 1, ["one"])


@pytest.mark.parametrize("bad", ["../x", "Upper", "a/b", ""])
def test_every_goal_entry_point_checks_the_id(store: Store, bad: str) -> None:
    calls = [
        lambda: store.read_goal(bad),
        lambda: store.update_goal(bad, lambda s: None),
        lambda: store.goal_lock(bad).__enter__(),
        lambda: store.append_event(bad, lambda n, last: event(n)),
        lambda: store.ledger_all(bad),
        lambda: store.ledger_since(bad, T0),
        lambda: store.spend_receipt(bad, "ti"),
        lambda: store.read_scheduler(bad),
        lambda: store.has_journal(bad, KEY),
        lambda: store.run_indexed(bad, "run-1"),
    ]
    for call in calls:
        with pytest.raises(UsageError):
            call()


def test_ledger_appends_in_order_and_keeps_time_non_decreasing(store: Store) -> None:
    with_goal(store)
    seen: list[tuple[int, int | None]] = []

    def build(at: float) -> object:
        def make(seq: int, last: LedgerEvent | None) -> LedgerEvent:
            seen.append((seq, last.seq if last else None))
            return event(seq, at_minutes=at)

        return make

    for at in (10, 20, 5):  # the third is older than the tail: stored at the tail's time
        store.append_event("g", build(at))  # type: ignore[arg-type]
    assert seen == [(1, None), (2, 1), (3, 2)]
    events = store.ledger_all("g")
    assert [e.seq for e in events] == [1, 2, 3]
    assert [e.at for e in events] == [T0 + timedelta(minutes=m) for m in (10, 20, 20)]
    assert [e.seq for e in store.ledger_since("g", T0 + timedelta(minutes=15))] == [2, 3]
    assert store.ledger_since("g", T0 + timedelta(minutes=21)) == []


def test_receipts_are_found_however_long_ago(store: Store) -> None:
    with_goal(store)
    store.append_event("g", lambda n, last: event(n, turn="ti-first"))
    for _ in range(30):
        store.append_event("g", lambda n, last: event(n, at_minutes=n))
    store.append_event("g", lambda n, last: event(n, at_minutes=n, kind="void"))
    found = store.spend_receipt("g", "ti-first")
    assert found is not None and found.seq == 1
    assert store.spend_receipt("g", "ti-never") is None
    void = store.void_receipt("g", "ev-1")
    assert void is not None and void.kind == "void"
    assert store.void_receipt("g", "ev-2") is None


def test_a_spend_is_charged_once_per_turn(store: Store) -> None:
    with_goal(store)
    first = spend.spend(store, "g", "a", T0, slots=2, turn_instance_id="ti-1")
    again = spend.spend(store, "g", "a", T0 + timedelta(minutes=1), slots=5, turn_instance_id="ti-1")
    assert (first.replayed, again.replayed, again.event) == (False, True, first.event)
    assert len(store.ledger_all("g")) == 1


def test_journals(store: Store) -> None:
    with_goal(store)
    assert not store.has_journal("g", KEY)
    with pytest.raises(NotFoundError):
        store.read_journal("g", KEY)
    with pytest.raises(UsageError):
        store.read_journal("g", "sha256:short")
    with store.goal_lock("g"):
        store.write_journal(journal())
    assert store.has_journal("g", KEY)
    changed = store.read_journal("g", KEY)
    changed.status = "committed"
    with store.goal_lock("g"):
        store.write_journal(changed)
    assert store.read_journal("g", KEY).status == "committed"
    assert [j.turn_key for j in store.read_journals("g")] == [KEY]
    assert [j.status for j in store.read_journals("g")] == ["committed"]


def test_runs_are_indexed_once(store: Store) -> None:
    with_goal(store)
    entry = RunIndexEntry(
        schema_version=1,
        run_id="run-1",
        at="2026-11-29T12:00:00Z",
        agent_id="a",
        turn_key=KEY,
        validation="passed",
        summary="s",
    )
    assert not store.run_indexed("g", "run-1")
    store.record_run("g", {"run_id": "run-1", "summary": "first"}, "# run-1\n", entry)
    store.record_run("g", {"run_id": "run-1", "summary": "retried"}, "# run-1 again\n", entry)
    assert store.run_indexed("g", "run-1")
    dump = snapshot_of(store).goals["g"]
    assert [e.run_id for e in dump.history] == ["run-1"]
    assert dump.runs["run-1"] == ({"run_id": "run-1", "summary": "retried"}, "# run-1 again\n")


def test_scheduler_state(store: Store) -> None:
    with_goal(store)
    assert store.read_scheduler("g").agents == {}
    state = SchedulerState(
        schema_version=1, goal_id="g", agents={"a": SchedulerEntry(applied_rrule="FREQ=HOURLY")}
    )
    with store.goal_lock("g"):
        store.write_scheduler(state)
    assert store.read_scheduler("g") == state


def test_the_goal_lock_is_reentrant_in_a_thread_and_exclusive_across_threads(store: Store) -> None:
    with_goal(store)
    order: list[str] = []
    held = threading.Event()

    def other() -> None:
        held.wait()
        with store.goal_lock("g"):
            order.append("other")

    thread = threading.Thread(target=other)
    thread.start()
    with store.goal_lock("g"), store.goal_lock("g"):  # re-entrant: no deadlock
        store.update_goal("g", lambda s: s.evidence.append("inside"))
        held.set()
        time.sleep(0.3)
        order.append("holder")
    thread.join(10)
    assert order == ["holder", "other"]
    assert store.read_goal("g").evidence == ["inside"]


def test_a_held_lock_times_out_as_lock_timeout(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    with_goal(store)
    monkeypatch.setenv("LOOPX_LOCK_TIMEOUT", "0.2")
    held, done = threading.Event(), threading.Event()

    def holder() -> None:
        with store.goal_lock("g"):
            held.set()
            done.wait(10)

    thread = threading.Thread(target=holder)
    thread.start()
    held.wait(10)
    try:
        with pytest.raises(LockTimeoutError):
            store.update_goal("g", lambda s: None)
    finally:
        done.set()
        thread.join(10)


def test_threads_lose_no_update(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    with_goal(store)
    monkeypatch.setenv("LOOPX_RACE_WINDOW", "0.01")  # every read-modify-write held open

    def work(n: int) -> None:
        for i in range(5):
            store.update_goal("g", lambda s, tag=f"{n}.{i}": s.evidence.append(tag))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    state = store.read_goal("g")
    assert len(state.evidence) == 30 and len(set(state.evidence)) == 30


def test_a_settled_turn_leaves_the_same_records(store: Store) -> None:
    with_goal(store)
    todos.add_todo(store, "g", "Todo", T0)
    settled = settle_turn(store, "a", "t1")
    assert settled.status == "committed"
    dump = snapshot_of(store).goals["g"]
    assert len(dump.events) == 1 and len(dump.history) == 1 and list(dump.journals) == [settled.turn_key]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(operations=OPERATIONS)
def test_both_stores_end_in_the_same_state(tmp_path: Path, pg_cluster: Cluster, operations: list) -> None:
    files = with_goal(make_store("files", tmp_path / f"f{len(list(tmp_path.iterdir()))}", pg_cluster))
    database = with_goal(make_store("postgresql", tmp_path / "pg", pg_cluster))
    try:
        assert apply(files, operations) == apply(database, operations)
        left, right = snapshot_of(files), snapshot_of(database)
        assert left.counts() == right.counts()
        assert left.checksum() == right.checksum()
    finally:
        database.close()  # type: ignore[attr-defined]


def test_history_and_run_records_read_back(store: Store) -> None:
    with_goal(store)
    todos.add_todo(store, "g", "One", T0)
    todos.add_todo(store, "g", "Two", T0)
    first = settle_turn(store, "a", "t1")
    store.update_goal("g", lambda s: s.open_turns.clear())
    settle_turn(store, "a", "t2", at=T0 + timedelta(minutes=5))
    history = store.read_history("g")
    assert [e.todo_id for e in history] == ["t1", "t2"]
    assert [e.todo_id for e in store.read_history("g", last=1)] == ["t2"]
    record = store.read_run("g", history[0].run_id)
    assert record["turn_key"] == first.turn_key and record["schema_version"] == 1
    with pytest.raises(NotFoundError):
        store.read_run("g", "run-none")
