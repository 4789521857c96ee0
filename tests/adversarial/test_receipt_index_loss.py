"""The receipt index is written without an fsync: however a crash leaves it, no effect repeats.

store/receipts.py's index is derived from the ledger and the run history, both fsynced before
it is renamed into place (store/atomic.py `durable=False`). The class: every state a crash (or
a lost page cache) can leave an un-fsynced file in: gone, empty, zero-filled (its length kept,
its bytes not), torn at any byte, or an older copy that is valid but stale. For each, a retried
spend of every turn charged so far is a replay (no second ledger line), and every run
recorded so far is still found in the history (a retried writeback adds no second line).
"""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.models.records import RunIndexEntry
from loopx_core.ops import spend
from loopx_core.store import receipts
from loopx_core.store.files import FileStore
from tests.builders import build_project
from tests.conftest import T0, T0_ISO

TURNS = 4


def record(store: FileStore, n: int) -> None:
    """Record run `run-<n>` (its JSON, Markdown and history line), as a writeback does."""
    entry = RunIndexEntry(
        schema_version=1,
        run_id=f"run-{n}",
        at=T0_ISO,
        agent_id="builder",
        turn_key=f"k-{n}",
        validation="passed",
        summary="done",
    )
    store.record_run("g", {"run_id": entry.run_id}, "# run\n", entry)


def charge_and_record(store: FileStore) -> list[bytes]:
    """`TURNS` turns, each a spend and a run record; the index's bytes after each step."""
    copies = []
    for n in range(TURNS):
        spend.spend(store, "g", "builder", T0, slots=1, turn_instance_id=f"i-{n}")
        copies.append(store.receipts_path("g").read_bytes())
        record(store, n)
        copies.append(store.receipts_path("g").read_bytes())
    return copies


def spend_lines(root: Path) -> int:
    """How many spend lines the ledger holds."""
    lines = (root / ".loopx/goals/g/events.jsonl").read_text().splitlines()
    return sum(json.loads(line)["kind"] == "spend" for line in lines)


def history_lines(root: Path) -> list[str]:
    """The run ids of the run history, in order."""
    lines = (root / ".loopx/goals/g/runs/index.jsonl").read_text().splitlines()
    return [json.loads(line)["run_id"] for line in lines]


LOSSES = st.one_of(
    st.just(("missing", 0)),
    st.just(("empty", 0)),
    st.tuples(st.just("zero-filled"), st.integers(0, 10_000)),
    st.tuples(st.just("torn"), st.integers(0, 10_000)),
    st.tuples(st.just("stale"), st.integers(0, 2 * TURNS - 1)),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(loss=LOSSES)
def test_a_lost_receipt_index_never_repeats_an_effect(tmp_path_factory, loss: tuple[str, int]) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("lost")
    store = build_project(root)
    copies = charge_and_record(store)
    index = store.receipts_path("g")
    current = index.read_bytes()
    kind, n = loss
    if kind == "missing":
        index.unlink()
    elif kind == "empty":
        index.write_bytes(b"")
    elif kind == "zero-filled":
        index.write_bytes(b"\x00" * (n % (len(current) + 1)))
    elif kind == "torn":
        index.write_bytes(current[: n % len(current)])
    else:
        index.write_bytes(copies[n])
    spends, history = spend_lines(root), history_lines(root)
    assert spends == TURNS and history == [f"run-{n}" for n in range(TURNS)]
    for turn in range(TURNS):
        again = spend.spend(store, "g", "builder", T0, slots=1, turn_instance_id=f"i-{turn}")
        assert again.replayed, (kind, n, turn)
    sources = store._receipt_sources("g")
    with store.goal_lock("g"):
        assert all(receipts.run_indexed(sources, f"run-{turn}") for turn in range(TURNS))
    for turn in range(TURNS):
        record(store, turn)  # a retried writeback's record: no second history line
    assert spend_lines(root) == spends
    assert history_lines(root) == history
    assert json.loads(index.read_bytes())["schema_version"] == 1  # rebuilt, whole again
