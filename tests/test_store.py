"""The store: atomic writes, schema refusal, ids, locks, the ledger's torn tail."""

from __future__ import annotations

import json
import os
from datetime import timedelta
from pathlib import Path

import pytest

from loopx_core.errors import ConflictError, NotFoundError, StateInvalidError, UsageError
from loopx_core.ids import check_id, is_valid_id
from loopx_core.models import codec
from loopx_core.models.records import LedgerEvent
from loopx_core.ops import goals, spend, todos
from loopx_core.store import ledger
from loopx_core.store.atomic import atomic_write_bytes
from tests.conftest import T0, Project


@pytest.mark.parametrize("bad", ["../x", "a/b", "Upper", "", ".hidden", "a..b", "x" * 65, "a b", "é"])
def test_bad_ids_refused(bad: str) -> None:
    assert not is_valid_id(bad)
    with pytest.raises(UsageError, match="invalid goal id"):
        check_id("goal", bad)


@pytest.mark.parametrize("good", ["a", "goal-1", "g.v2", "x_y", "0" * 64])
def test_good_ids(good: str) -> None:
    assert check_id("goal", good) == good


def test_goal_paths_cannot_escape(project: Project) -> None:
    with pytest.raises(UsageError):
        project.store.goal_path("../../etc")


def test_every_file_carries_schema_version(project: Project) -> None:
    goals.add_goal(project.store, "g", "Objective", T0)
    goals.register_agent(project.store, "a", [], T0)
    spend.spend(project.store, "g", "a", T0, slots=1)
    assert json.loads(project.store.registry_path.read_text())["schema_version"] == 1
    assert json.loads(project.store.goal_path("g").read_text())["schema_version"] == 1
    line = project.store.ledger_path("g").read_text().splitlines()[0]
    assert json.loads(line)["schema_version"] == 1


def test_newer_schema_refused_and_file_untouched(project: Project) -> None:
    goals.add_goal(project.store, "g", "Objective", T0)
    path = project.store.goal_path("g")
    data = json.loads(path.read_text())
    data["schema_version"] = 2
    path.write_text(json.dumps(data))
    before = path.read_bytes()
    with pytest.raises(StateInvalidError, match="schema_version 2") as info:
        todos.add_todo(project.store, "g", "x", T0)
    assert info.value.code == "schema_unsupported"
    assert path.read_bytes() == before


def test_unknown_key_refused_so_nothing_is_dropped(project: Project) -> None:
    goals.add_goal(project.store, "g", "Objective", T0)
    path = project.store.goal_path("g")
    data = json.loads(path.read_text())
    data["future_field"] = {"keep": "me"}
    path.write_text(json.dumps(data))
    with pytest.raises(StateInvalidError, match="future_field"):
        todos.add_todo(project.store, "g", "x", T0)
    assert "future_field" in path.read_text()


def test_update_increments_version_and_cas_detects_moves(project: Project) -> None:
    goals.add_goal(project.store, "g", "Objective", T0)
    assert project.store.read_goal("g").version == 0
    todos.add_todo(project.store, "g", "x", T0)
    assert project.store.read_goal("g").version == 1
    with pytest.raises(ConflictError, match="expected version 0"):
        project.store.update_goal("g", lambda s: None, expect_version=0)
    project.store.update_goal("g", lambda s: None, expect_version=1)
    assert project.store.read_goal("g").version == 2


def test_failed_change_writes_nothing(project: Project) -> None:
    goals.add_goal(project.store, "g", "Objective", T0)
    path = project.store.goal_path("g")
    before = path.read_bytes()

    def boom(state):  # type: ignore[no-untyped-def]
        state.todos.clear()
        raise ConflictError("no")

    with pytest.raises(ConflictError):
        project.store.update_goal("g", boom)
    assert path.read_bytes() == before


def test_atomic_write_leaves_no_temp_files(tmp_path) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "f.json"
    atomic_write_bytes(target, b"one")
    atomic_write_bytes(target, b"two")
    assert target.read_bytes() == b"two"
    assert os.listdir(tmp_path) == ["f.json"]


def test_uninitialised_root_is_a_clear_not_found(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from loopx_core.store.files import FileStore

    with pytest.raises(NotFoundError, match="run `loopx init`"):
        FileStore(tmp_path).read_registry()


def _event(seq: int, minutes: float, slots: int = 1) -> LedgerEvent:
    return LedgerEvent(
        schema_version=1,
        event_id=f"ev-{seq}",
        seq=seq,
        kind="spend",
        at=T0 + timedelta(minutes=minutes),
        goal_id="g",
        agent_id="a",
        slots=slots,
    )


def test_ledger_tail_reads_only_the_window(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "events.jsonl"
    for seq in range(1, 3001):
        ledger.append_line(path, codec.line(_event(seq, seq)))
    tail = ledger.read_tail(path, T0 + timedelta(minutes=2990))
    assert [e.seq for e in tail] == list(range(2990, 3001))
    assert len(ledger.read_all(path)) == 3000
    assert ledger.last_event(path).seq == 3000  # type: ignore[union-attr]


def test_ledger_torn_tail_ignored_then_cut_on_next_append(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "events.jsonl"
    ledger.append_line(path, codec.line(_event(1, 0)))
    with path.open("ab") as handle:
        handle.write(b'{"schema_version":1,"event_id":"ev-2","se')  # a crash mid-append
    assert [e.seq for e in ledger.read_all(path)] == [1]
    ledger.append_line(path, codec.line(_event(2, 1)))
    assert [e.seq for e in ledger.read_all(path)] == [1, 2]
    assert path.read_bytes().count(b"\n") == 2


def test_ledger_corrupt_middle_line_is_state_invalid(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "events.jsonl"
    ledger.append_line(path, codec.line(_event(1, 0)))
    ledger.append_line(path, b"not json")
    ledger.append_line(path, codec.line(_event(3, 1)))
    with pytest.raises(StateInvalidError, match="line of the ledger"):
        ledger.read_all(path)


def test_append_keeps_time_order(project: Project) -> None:
    goals.add_goal(project.store, "g", "Objective", T0)
    goals.register_agent(project.store, "a", [], T0)
    spend.spend(project.store, "g", "a", T0 + timedelta(minutes=10), slots=1)
    late = spend.spend(project.store, "g", "a", T0, slots=1).event  # a clock behind the ledger
    assert late.at == T0 + timedelta(minutes=10)
    assert late.seq == 2


def test_the_file_store_implements_the_whole_store_interface() -> None:
    import inspect

    from loopx_core.store.base import Store
    from loopx_core.store.files import FileStore

    wanted = {n for n, v in vars(Store).items() if callable(v) and not n.startswith("_")}
    assert wanted, "the protocol lists methods"
    for name in sorted(wanted):
        assert inspect.signature(getattr(FileStore, name)) == inspect.signature(getattr(Store, name)), name


def test_an_atomic_write_leaves_only_its_file_private_to_its_owner(tmp_path: Path) -> None:
    target = tmp_path / "state.json"
    atomic_write_bytes(target, b"{}")
    assert target.read_bytes() == b"{}" and [p.name for p in tmp_path.iterdir()] == ["state.json"]
    assert target.stat().st_mode & 0o777 == 0o600  # as tempfile.mkstemp creates it
