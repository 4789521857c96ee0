"""Class: locks that hold across threads of one process, not only across processes.

The MCP server runs tool calls in worker threads; a process-wide "already held" count once
let two threads into one goal's read-modify-write (two spend events with one id, several
holders of one lease, a KeyError on the lock bookkeeping).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from loopx_core.errors import ConflictError, LockTimeoutError, LoopxError, UsageError
from loopx_core.kernel.algebra import StepKind
from loopx_core.ops import goals, spend, todos
from loopx_core.settlement.turns import settle_steps
from loopx_core.store.lock import file_lock
from tests.conftest import T0
from tests.turns import begun_turn

THREADS = 16
ROUNDS = 5


def _race(n: int, work: Callable[[int], Any]) -> list[Any]:
    """Run `work(i)` in `n` threads released together; each result or raised error, in order."""
    barrier = threading.Barrier(n)
    results: list[Any] = [None] * n

    def run(i: int) -> None:
        barrier.wait()
        try:
            results[i] = work(i)
        except Exception as error:  # collected, then asserted on by the test
            results[i] = error

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_a_lock_is_exclusive_between_threads_and_reentrant_within_one(tmp_path: Path) -> None:
    path = tmp_path / "locks" / "g.lock"
    inside, most, total = [0], [0], [0]

    def work(_: int) -> None:
        for _ in range(10):
            with file_lock(path), file_lock(path):  # nested: re-entrant in the holding thread
                inside[0] += 1
                most[0] = max(most[0], inside[0])
                value = total[0]
                threading.Event().wait(0.0002)
                total[0] = value + 1
                inside[0] -= 1

    assert _race(THREADS, work) == [None] * THREADS
    assert (most[0], total[0]) == (1, THREADS * 10)


def test_another_thread_times_out_while_one_holds_the_lock(tmp_path: Path) -> None:
    path = tmp_path / "locks" / "g.lock"
    with file_lock(path):
        [error] = _race(1, lambda _: file_lock(path, timeout=0.05).__enter__())
    assert isinstance(error, LockTimeoutError)
    assert str(tmp_path) not in error.message  # the lock's name, never its path


@pytest.mark.parametrize("raw", ["abc", "nan", "inf", "-1", "1e9"])
def test_a_bad_lock_timeout_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, raw: str
) -> None:
    monkeypatch.setenv("LOOPX_LOCK_TIMEOUT", raw)
    with pytest.raises(UsageError, match="LOOPX_LOCK_TIMEOUT"), file_lock(tmp_path / "x.lock"):
        pass


def test_concurrent_spends_of_one_turn_charge_once(tmp_path: Path) -> None:
    figures = []
    for round_no in range(ROUNDS):
        turn = begun_turn(tmp_path / f"r{round_no}")
        settle_steps(turn.ctx(), [StepKind.VALIDATION, StepKind.DURABLE_WRITEBACK], adapter="test")
        results = _race(
            THREADS, lambda _, t=turn: settle_steps(t.ctx(), [StepKind.QUOTA_SPEND], adapter="test")
        )
        assert [r for r in results if isinstance(r, Exception)] == []
        events = [line for line in turn.store.ledger_path("g").read_text().splitlines() if line]
        assert len(events) == 1, events
        figures.append(len(events))
    print(f"\nthreads: {ROUNDS} rounds x {THREADS} concurrent spends of one turn -> spends {figures}")


def test_concurrent_claims_give_one_holder(tmp_path: Path) -> None:
    holders_per_round = []
    for round_no in range(ROUNDS):
        turn = begun_turn(tmp_path / f"r{round_no}", todos_count=2)
        for i in range(THREADS):
            goals.register_agent(turn.store, f"a{i}", [], T0)
        results = _race(THREADS, lambda i, t=turn: todos.claim_todo(t.store, "g", "t2", f"a{i}", T0))
        wins = [r for r in results if not isinstance(r, Exception)]
        losses = [r for r in results if isinstance(r, Exception)]
        assert len(wins) == 1 and all(isinstance(e, ConflictError) for e in losses), results
        assert turn.store.read_goal("g").todo("t2").claimed_by == wins[0].claimed_by
        holders_per_round.append(len(wins))
    print(
        f"\nthreads: {ROUNDS} rounds x {THREADS} concurrent claims of one todo -> holders {holders_per_round}"
    )


def test_concurrent_manual_spends_are_all_recorded_with_distinct_ids(tmp_path: Path) -> None:
    turn = begun_turn(tmp_path)
    results = _race(THREADS, lambda i: spend.spend(turn.store, "g", "builder", T0, slots=1))
    assert not [r for r in results if isinstance(r, LoopxError | Exception)]
    events = turn.store.ledger_all("g")
    assert sorted(e.seq for e in events) == list(range(1, THREADS + 1))
    assert len({e.event_id for e in events}) == THREADS
