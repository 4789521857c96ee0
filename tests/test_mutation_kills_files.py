"""Kills the survivors of `make mutate MODULES=loopx_core/store/files.py` (docs/testing.md).

The run records and the run history were read in-process only through a tick's reads, and every id check through `loopx` subprocesses: here `FileStore`'s own reads are
asked for each answer and each refusal.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loopx_core.errors import NotFoundError, SchemaUnsupportedError, StateInvalidError, UsageError
from loopx_core.kernel.algebra import StepKind
from loopx_core.store.files import FileStore
from tests.builders import build_project, settle_turn

ID_RULE = "use 1-64 of a-z 0-9 . _ - (lower case, starting with a letter or digit, no '..')"


@pytest.fixture
def settled(tmp_path: Path) -> FileStore:
    """Goal `g` with three turns written back (three runs in its history), by three agents."""
    store = build_project(tmp_path, agents=("a1", "a2", "a3"), todo_count=3)
    for n, agent in enumerate(("a1", "a2", "a3"), start=1):
        settle_turn(store, agent, f"t{n}", steps=(StepKind.VALIDATION, StepKind.DURABLE_WRITEBACK))
    return store


def test_the_history_reads_every_run_or_only_the_last_ones(settled: FileStore) -> None:
    every = settled.read_history("g")
    assert [entry.todo_id for entry in every] == ["t1", "t2", "t3"]
    assert [entry.todo_id for entry in settled.read_history("g", last=2)] == ["t2", "t3"]
    assert [entry.run_id for entry in settled.read_history("g", last=1)] == [every[-1].run_id]


def test_a_run_record_reads_back_as_written(settled: FileStore) -> None:
    entry = settled.read_history("g")[0]
    record = settled.read_run("g", entry.run_id)
    assert record["schema_version"] == 1
    assert record == json.loads((settled.runs_dir("g") / f"{entry.run_id}.json").read_text())


def test_a_run_record_keeps_its_text_as_utf8(settled: FileStore) -> None:
    entry = settled.read_history("g")[0]
    settled.record_run("g", {"schema_version": 1, "summary": "déjà vu ✓"}, "# déjà", entry)
    raw = (settled.runs_dir("g") / f"{entry.run_id}.json").read_bytes()
    assert "déjà vu ✓".encode() in raw
    assert settled.read_run("g", entry.run_id)["summary"] == "déjà vu ✓"


@pytest.mark.parametrize(
    ("content", "error", "message"),
    [
        (None, NotFoundError, "run 'run-x' not found in goal 'g'"),
        (
            b"{not json",
            StateInvalidError,
            "run record .loopx/goals/g/runs/run-x.json is unreadable or not JSON",
        ),
        (
            b"[1]",
            SchemaUnsupportedError,
            "run record .loopx/goals/g/runs/run-x.json is not a schema 1 run record",
        ),
        (
            b'{"schema_version": 2}',
            SchemaUnsupportedError,
            "run record .loopx/goals/g/runs/run-x.json is not a schema 1 run record",
        ),
        (
            "folder",
            StateInvalidError,
            "run record at .loopx/goals/g/runs/run-x.json is a folder, not a regular file: move it aside"
            " (`loopx doctor` reports it)",
        ),
    ],
)
def test_a_missing_or_damaged_run_record_is_refused_in_one_line(
    settled: FileStore, content: bytes | str | None, error: type[Exception], message: str
) -> None:
    path = settled.runs_dir("g") / "run-x.json"
    if content == "folder":
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    with pytest.raises(error) as caught:
        settled.read_run("g", "run-x")
    assert str(caught.value) == message


@pytest.mark.parametrize(
    "read",
    [
        lambda store: store.goal_lock("../g"),
        lambda store: store.read_history("../g"),
        lambda store: store.read_run("../g", "run-x"),
    ],
)
def test_every_read_and_lock_refuses_a_goal_id_that_is_not_one(settled: FileStore, read: object) -> None:
    with pytest.raises(UsageError) as caught:
        read(settled)  # type: ignore[operator]
    assert str(caught.value) == f"invalid goal id '../g': {ID_RULE}"


def test_a_run_id_that_is_not_one_is_refused(settled: FileStore) -> None:
    with pytest.raises(UsageError) as caught:
        settled.read_run("g", "../run")
    assert str(caught.value) == f"invalid run id '../run': {ID_RULE}"


def test_init_says_whether_it_initialised_and_writes_the_gitignore(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    assert store.init() is True
    assert sorted(p.name for p in (tmp_path / ".loopx").iterdir()) == [".gitignore", "locks", "registry.json"]
    assert store.init() is False


@pytest.mark.parametrize("read", [lambda s: s.read_registry(), lambda s: s.update_registry(lambda r: None)])
def test_a_damaged_registry_is_refused_by_every_read_naming_it(tmp_path: Path, read: object) -> None:
    store = FileStore(tmp_path)
    store.init()
    (tmp_path / ".loopx" / "registry.json").write_bytes(b"{")
    with pytest.raises(StateInvalidError) as caught:
        read(store)  # type: ignore[operator]
    assert str(caught.value).startswith("registry at .loopx/registry.json is not valid JSON (truncated?)")
