"""The settlement store writes the bytes the pydantic file store writes, whatever is done.

A generated sequence of operations (the store contract's, whole and partial turns, spends,
voids, completions, cancels, odd text) runs once through `FileStore` (pydantic models) and
once through `LeanSettleStore` (lean objects); each outcome and every file under the two
projects are the same, byte for byte (state, journals, ledger, history, run records, the
receipt index and the `.prev` copies).
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.kernel.algebra import StepKind
from loopx_core.ops import goals, todos
from loopx_core.settlement.turns import cancel_turn
from loopx_core.store.base import Store
from loopx_core.store.files import FileStore
from loopx_core.store.lean_store import LeanSettleStore
from tests.builders import settle_turn, tree
from tests.conftest import T0
from tests.store_ops import OPERATIONS, apply, with_goal

ORDER = (StepKind.VALIDATION, StepKind.DURABLE_WRITEBACK, StepKind.QUOTA_SPEND)
STEPS = st.one_of(st.just(ORDER), st.sets(st.sampled_from(ORDER)).map(lambda s: [k for k in ORDER if k in s]))
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=12)
TURNS = st.lists(
    st.one_of(
        st.tuples(st.just("todo"), TEXT),
        st.tuples(st.just("turn"), st.tuples(st.sampled_from(["a", "b"]), st.integers(1, 3), STEPS)),
        st.tuples(st.just("cancel"), st.sampled_from(["a", "b"])),
        st.tuples(st.just("complete"), st.tuples(st.integers(1, 3), st.sampled_from(["a", "b"]), TEXT)),
    ),
    max_size=8,
)


def run_turns(store: Store, operations: list[tuple[str, object]]) -> list[str]:
    """Turns and todo moves through the real settlement code; each outcome (or refusal) as text."""
    outcomes = []
    for n, (name, arg) in enumerate(operations):
        at = T0 + timedelta(minutes=30 + n)
        try:
            if name == "todo":
                outcomes.append(todos.add_todo(store, "g", str(arg), at).todo_id)
            elif name == "turn":
                agent, todo, steps = arg  # type: ignore[misc]
                journal = settle_turn(store, agent, f"t{todo}", at=at, steps=steps)
                outcomes.append(f"{journal.status} {journal.completed()}")
            elif name == "cancel":
                key = store.read_goal("g").open_turns.get(str(arg))
                stopped = cancel_turn(store, "g", str(arg), key or "sha256:" + "0" * 64, at, "test")
                outcomes.append("none" if stopped is None else stopped.status)
            else:
                todo, agent, evidence = arg  # type: ignore[misc]
                done = todos.complete_todo(store, "g", f"t{todo}", at, agent_id=agent, evidence=[evidence])
                outcomes.append(done.status)
        except Exception as error:  # a refusal is an outcome too: both stores must give the same
            outcomes.append(f"{type(error).__name__}: {error}")
    return outcomes


def _pair(tmp_path: Path) -> tuple[Store, Store]:
    n = len(list(tmp_path.iterdir()))
    made = []
    for cls, name in ((FileStore, "files"), (LeanSettleStore, "lean")):
        root = tmp_path / f"{name}-{n}"
        root.mkdir()
        store = cls(root)
        store.init()
        with_goal(store)
        goals.register_agent(store, "b", [], T0)
        for title in ("One", "Two", "Three"):
            todos.add_todo(store, "g", title, T0)
        made.append(store)
    return made[0], made[1]


def _files(store: Store) -> dict[str, bytes | None]:
    return {k: v for k, v in tree(store.root).items() if not k.startswith(".loopx/locks/")}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(operations=OPERATIONS, turns=TURNS)
def test_both_stores_write_the_same_bytes(tmp_path: Path, operations: list, turns: list) -> None:
    pydantic_store, lean_store = _pair(tmp_path)
    assert apply(pydantic_store, operations) == apply(lean_store, operations)
    assert run_turns(pydantic_store, turns) == run_turns(lean_store, turns)
    assert _files(pydantic_store) == _files(lean_store)


def test_the_lean_store_reads_and_builds_lean_objects(tmp_path: Path) -> None:
    pydantic_store, lean_store = _pair(tmp_path)
    journal = settle_turn(lean_store, "a", "t1")
    for value in (
        journal,
        lean_store.read_goal("g"),
        lean_store.read_registry(),
        *lean_store.ledger_all("g"),
    ):
        assert type(value).__module__ == "loopx_core.models.lean", type(value)
    assert lean_store.models.TurnJournal.__module__ == "loopx_core.models.lean"
    assert pydantic_store.models.TurnJournal.__module__ == "loopx_core.models.journal"
