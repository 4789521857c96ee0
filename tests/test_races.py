"""Deterministic races: every read-modify-write held open between its read and its write.

`LOOPX_RACE_WINDOW` makes the store pause inside each read-modify-write, so two writers
that the lock does not serialise both read the same state every time. Under the lock they
still settle correctly: one claimant wins, one begin opens the turn, every spend lands with
its own sequence number, a repeated writeback indexes one run. `test_the_window_has_teeth`
removes the lock and shows the same runs then lose updates, every time.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from loopx_core.errors import ConflictError, LoopxError
from loopx_core.kernel.algebra import StepKind
from loopx_core.ops import spend, todos
from loopx_core.settlement.steps import TurnContext
from loopx_core.settlement.turns import begin_turn, settle_steps
from loopx_core.store import files
from loopx_core.store.files import FileStore
from tests.builders import build_project
from tests.conftest import T0, run_loopx

WINDOW = "0.3"
AGENTS = ("a1", "a2", "a3")


def _project(root: Path) -> FileStore:
    return build_project(root, agents=AGENTS)


def _threads(n: int, work: Callable[[int], Any]) -> list[Any]:
    barrier = threading.Barrier(n)

    def run(i: int) -> Any:
        barrier.wait()
        try:
            return work(i)
        except LoopxError as error:
            return error

    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(run, range(n)))


def _processes(root: Path, argvs: list[list[str]]) -> list[int]:
    results: list[int] = [0] * len(argvs)
    barrier = threading.Barrier(len(argvs))

    def run(i: int) -> None:
        barrier.wait()
        results[i] = run_loopx(*argvs[i], root=root, env={"LOOPX_RACE_WINDOW": WINDOW}).exit_code

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(argvs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def _ledger(root: Path) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in (root / ".loopx/goals/g/events.jsonl").read_text().splitlines()]


# -- the four read-modify-writes, each in threads ------------------------------------------


def claim_race(store: FileStore) -> None:
    results = _threads(3, lambda i: todos.claim_todo(store, "g", "t1", AGENTS[i], T0))
    winners = [r for r in results if not isinstance(r, Exception)]
    assert len(winners) == 1 and sum(isinstance(r, ConflictError) for r in results) == 2, results
    assert store.read_goal("g").todo("t1").claimed_by == winners[0].claimed_by  # type: ignore[union-attr]


def begin_race(store: FileStore) -> None:
    results = _threads(3, lambda i: begin_turn(store, "g", AGENTS[i], T0, todo_id="t1"))
    opened = [r for r in results if not isinstance(r, Exception)]
    assert len(opened) == 1, results
    state = store.read_goal("g")
    assert list(state.open_turns) == [opened[0][0].agent_id] == [state.todo("t1").claimed_by]  # type: ignore[union-attr]


def spend_race(store: FileStore) -> None:
    _threads(3, lambda i: spend.spend(store, "g", AGENTS[i], T0, slots=1))
    events = store.ledger_all("g")
    assert sorted(e.seq for e in events) == [1, 2, 3], events


def writeback_race(store: FileStore) -> None:
    journal, _ = begin_turn(store, "g", "a1", T0, todo_id="t1")

    def settle(_: int) -> Any:
        ctx = TurnContext(store, "g", "a1", journal.turn_key, lambda: T0, summary="s", validation_passed=True)
        return settle_steps(ctx, [StepKind.VALIDATION, StepKind.DURABLE_WRITEBACK], adapter="t")

    _threads(3, settle)
    lines = (store.runs_dir("g") / "index.jsonl").read_text().splitlines()
    assert len(lines) == 1, lines
    assert store.read_journal("g", journal.turn_key).completed().count("durable_writeback") == 1


def grant_race(store: FileStore) -> None:
    """The dashboard's Grant, three owners at once, each a capability: none is lost."""
    from loopx_core.dashboard.actions import grant

    caps = ("python", "web", "sql")
    _threads(3, lambda i: grant(store, "g", {"agent_id": "a1", "capability": caps[i].upper()}, T0))
    assert store.read_registry().agents["a1"].capabilities == sorted(caps)


RACES = {
    "claim": claim_race,
    "begin": begin_race,
    "spend": spend_race,
    "writeback": writeback_race,
    "grant": grant_race,
}


@pytest.mark.parametrize("name", sorted(RACES))
def test_threads_racing_inside_the_window_stay_correct(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setenv("LOOPX_RACE_WINDOW", WINDOW)
    RACES[name](_project(tmp_path))


@contextlib.contextmanager
def _no_lock(path: Path, *, timeout: float | None = None) -> Iterator[None]:
    yield


@pytest.mark.parametrize("name", ["claim", "begin", "spend", "grant"])
def test_the_window_has_teeth(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """With the lock taken away, the same race loses an update: the window always exposes it."""
    monkeypatch.setenv("LOOPX_RACE_WINDOW", WINDOW)
    monkeypatch.setattr(files, "file_lock", _no_lock)
    with pytest.raises(AssertionError):
        RACES[name](_project(tmp_path))


# -- and across processes, through the real CLI --------------------------------------------


def test_processes_claiming_inside_the_window_give_one_holder(tmp_path: Path) -> None:
    store = _project(tmp_path)
    codes = _processes(tmp_path, [["todo", "claim", "-g", "g", "-t", "t1", "-a", a] for a in AGENTS])
    assert sorted(codes) == [0, 5, 5], codes
    assert store.read_goal("g").todo("t1").claimed_by in AGENTS  # type: ignore[union-attr]


def test_processes_beginning_inside_the_window_open_one_turn(tmp_path: Path) -> None:
    store = _project(tmp_path)
    codes = _processes(tmp_path, [["turn", "begin", "-g", "g", "-a", a, "-t", "t1"] for a in AGENTS])
    assert codes.count(0) == 1, codes
    assert len(store.read_goal("g").open_turns) == 1


def test_processes_spending_inside_the_window_all_land(tmp_path: Path) -> None:
    _project(tmp_path)
    argv = [["quota", "spend", "-g", "g", "-a", a, "--manual", "--slots", "1"] for a in AGENTS]
    assert _processes(tmp_path, argv) == [0, 0, 0]
    assert sorted(e["seq"] for e in _ledger(tmp_path)) == [1, 2, 3]


def test_processes_settling_one_turn_inside_the_window_spend_once(tmp_path: Path) -> None:
    store = _project(tmp_path)
    journal, _ = begin_turn(store, "g", "a1", T0, todo_id="t1")
    key = journal.turn_key
    wb = ["writeback", "-g", "g", "-a", "a1", "-k", key, "--summary", "s", "--validation-status", "passed"]
    assert _processes(tmp_path, [wb, wb, wb]) == [0, 0, 0]
    assert _processes(tmp_path, [["quota", "spend", "-g", "g", "-a", "a1", "-k", key]] * 3) == [0, 0, 0]
    assert len(_ledger(tmp_path)) == 1
    assert len((store.runs_dir("g") / "index.jsonl").read_text().splitlines()) == 1
