"""Class: a repair acts only on what is still wrong under the lock it repairs with.

Observed: `loopx doctor --repair` checked without the lock and repaired without checking again.
With commands running beside it, it quarantined a valid `state.json` and restored `.prev`
(rolling back a `todo add` that had exited 0), restored an older registry over a `goal add`,
and stopped a live turn as an orphan (its `turn begin` had written the journal and not yet
named it). Here every kind of repairable finding is found, then a command mends or completes
the state before the repair runs (as one running beside the doctor would): the repair leaves
every byte as the command left it and says there was nothing to repair.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from loopx_core.doctor.state import check_state
from loopx_core.ops import todos
from loopx_core.settlement.turns import begin_turn
from loopx_core.store.files import FileStore
from tests.builders import build_project, settle_turn, tree
from tests.conftest import T0

Case = tuple[Callable[[FileStore], None], Callable[[FileStore], None], str]


def _damaged_state(store: FileStore) -> None:
    path = store.goal_path("g")
    path.write_bytes(b"{torn")


def _state_rewritten(store: FileStore) -> None:
    good = store.goal_path("g").with_name("state.json.prev").read_bytes()
    store.goal_path("g").write_bytes(good)  # what the next good write leaves
    todos.add_todo(store, "g", "added while the doctor ran", T0)


def _damaged_registry(store: FileStore) -> None:
    store.registry_path.write_bytes(b"[")


def _registry_rewritten(store: FileStore) -> None:
    store.registry_path.write_bytes(store.registry_path.with_name("registry.json.prev").read_bytes())
    from loopx_core.ops import goals

    goals.add_goal(store, "fresh", "added while the doctor ran", T0)


def _torn_tail(store: FileStore) -> None:
    path = Path(store.ledger_path("g"))
    path.write_bytes(path.read_bytes() + b'{"half": ')


def _tail_finished(store: FileStore) -> None:
    path = Path(store.ledger_path("g"))
    data = path.read_bytes()
    path.write_bytes(data[: data.rfind(b"\n") + 1])  # the writer's own cut, then its append
    from loopx_core.ops import spend

    spend.spend(store, "g", "builder", T0, slots=1)


def _journal_unnamed(store: FileStore) -> None:
    """`turn begin` between writing the journal and naming it in the goal's open turns."""
    journal, _ = begin_turn(store, "g", "other", T0, todo_id="t2")
    store.update_goal("g", lambda s: s.open_turns.pop("other"))
    (Path(store.root) / "key").write_text(journal.turn_key)


def _journal_named(store: FileStore) -> None:
    key = (Path(store.root) / "key").read_text()
    store.update_goal("g", lambda s: s.open_turns.__setitem__("other", key))


def _journal_gone(store: FileStore) -> None:
    key = store.read_goal("g").open_turns["builder"]
    path = store.turn_path("g", key)
    (Path(store.root) / "journal").write_bytes(path.read_bytes())
    path.unlink()


def _journal_back(store: FileStore) -> None:
    key = store.read_goal("g").open_turns["builder"]
    store.turn_path("g", key).write_bytes((Path(store.root) / "journal").read_bytes())


def _scheduler_damaged(store: FileStore) -> None:
    store.scheduler_path("g").write_bytes(b"{")


def _scheduler_rewritten(store: FileStore) -> None:
    from loopx_core.ops import scheduler

    store.scheduler_path("g").unlink()
    scheduler.ack(store, "g", "builder", T0, rrule="FREQ=HOURLY", fingerprint="f")


CASES: dict[str, Case] = {
    "state_corrupt": (_damaged_state, _state_rewritten, "nothing to repair"),
    "registry_corrupt": (_damaged_registry, _registry_rewritten, "nothing to repair"),
    "ledger_torn_tail": (_torn_tail, _tail_finished, "nothing to cut"),
    "orphan_journal": (_journal_unnamed, _journal_named, "nothing to repair"),
    "open_turn_without_journal": (_journal_gone, _journal_back, "nothing to repair"),
    "state_corrupt scheduler": (_scheduler_damaged, _scheduler_rewritten, "nothing to repair"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_finding_mended_before_its_repair_is_left_alone(tmp_path: Path, name: str) -> None:
    damage, mend, says = CASES[name]
    store = build_project(tmp_path, todo_count=3)
    settle_turn(store, "builder", "t1", slots=1)
    todos.complete_todo(store, "g", "t1", T0, agent_id="builder")
    settle_turn(store, "builder", "t3", steps=())  # builder's open turn on t3
    todos.add_todo(store, "g", "so that state.json.prev exists", T0)
    damage(store)
    code = name.split()[0]
    found = [f for f in check_state(store, T0) if f.code == code and f.fix is not None]
    assert found, [f.code for f in check_state(store, T0)]
    mend(store)
    before = tree(tmp_path / ".loopx")
    said = [f.fix() for f in found]  # type: ignore[misc]
    assert all(says in s for s in said), said
    assert {k: v for k, v in tree(tmp_path / ".loopx").items() if "locks" not in k} == {
        k: v for k, v in before.items() if "locks" not in k
    }
    assert json.loads(store.goal_path("g").read_bytes())["schema_version"] == 1
