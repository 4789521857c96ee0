"""Class: a stored file that is no regular file, or is enormous, is refused at once, never read.

Every file LoopX keeps under `.loopx/` (registry, goal state, ledger, run history, receipt
index, turn journal, scheduler state, store choice, run record, a kept `.prev`) replaced by
each kind of non-file (a real FIFO, a socket, a link to /dev/zero or /dev/null, a folder, a
loop of links, a link to nothing, a sparse file over the size cap). Through the CLI (a
subprocess with a timeout: a FIFO once hung every command, /dev/zero ran out of memory), a
tick (`quota should-run`), a settlement command (`writeback`) and the doctor: no command blocks, each answers a documented exit code
with one line naming the file's shown path, refuses with exit 4 where it reads the file,
and writes nothing. In-process, each reader of the store (`read_bytes`, `reverse_lines`,
the receipt index, run records, the whole-store read) raises the same
`NotAFileError` under an alarm, so a reader that blocks fails instead of hanging the suite.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from loopx_core.errors import EXIT_CODES, ExitCode, StateInvalidError
from loopx_core.store import files_bulk, ledger, receipts
from loopx_core.store.atomic import NotAFileError, read_bytes
from loopx_core.store.files import FileStore
from tests.builders import lived_in_project
from tests.conftest import T0, run_loopx
from tests.non_files import KINDS, replace_with, tree_of_kinds

DOCUMENTED = {int(code) for code in EXIT_CODES} - {int(ExitCode.INTERNAL)}
APPENDED = {"ledger", "history"}
FILES: dict[str, str] = {
    "registry": ".loopx/registry.json",
    "state": ".loopx/goals/g/state.json",
    "ledger": ".loopx/goals/g/events.jsonl",
    "history": ".loopx/goals/g/runs/index.jsonl",
    "receipts": ".loopx/goals/g/receipts.json",
    "journal": "JOURNAL",
    "scheduler": ".loopx/goals/g/scheduler.json",
    "store-choice": ".loopx/store.json",
}


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """Goal g: a settled turn of builder on t1, an open one on t2 (its key returned), scheduler state."""
    root = tmp_path_factory.mktemp("template")
    return root, lived_in_project(root)


def _copy(template: tuple[Path, str], tmp_path: Path) -> tuple[Path, str]:
    root = tmp_path / "p"
    shutil.copytree(template[0], root, symlinks=True)
    return root, template[1]


def _path(root: Path, which: str, key: str) -> Path:
    relative = FILES[which]
    if relative == "JOURNAL":
        relative = f".loopx/goals/g/turns/{key[7:]}.json"
    return root / relative


def _commands(key: str) -> dict[str, list[str]]:
    return {
        "should-run": ["quota", "should-run", "-g", "g", "-a", "builder", "--format", "json"],
        "status": ["status", "--format", "json"],
        "writeback": [
            "writeback", "-g", "g", "-a", "builder", "-k", key, "--summary", "s",
            "--validation-status", "passed", "--format", "json",
        ],
        "doctor": ["doctor", "--check", "state", "--format", "json"],
    }  # fmt: skip


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("which", sorted(FILES))
def test_no_command_blocks_reads_or_writes_a_stored_file_that_is_not_a_file(
    template: tuple[Path, str], tmp_path: Path, which: str, kind: str
) -> None:
    root, key = _copy(template, tmp_path)
    path = _path(root, which, key)
    replace_with(path, kind, appended=which in APPENDED)
    shown = str(path.relative_to(root))
    refused = []
    for name, args in _commands(key).items():
        before = tree_of_kinds(root)
        result = run_loopx(*args, root=root, timeout=30)  # a hang fails here
        where = f"{name} with a {kind} {which}"
        out = result.stdout + result.stderr
        assert result.exit_code in DOCUMENTED | {0}, f"{where}: {result.exit_code} {result.stderr}"
        assert "Traceback" not in out and str(tmp_path) not in out, f"{where}: {out}"
        if result.exit_code == int(ExitCode.STATE_INVALID) and shown in out:
            refused.append(name)
        if name == "doctor" and result.exit_code == int(ExitCode.DRIFT):
            report = json.loads(result.stdout)
            assert any(shown in f["message"] for f in report["findings"]), f"{where}: {report}"
            refused.append(name)
        if result.exit_code not in (0, int(ExitCode.DRIFT)) and name != "should-run":
            assert result.stderr.count("\n") == 1, f"{where}: {result.stderr}"
        if result.exit_code != 0:
            assert tree_of_kinds(root) == before, f"{where} changed files"
    assert "doctor" in refused, f"the doctor does not name a {kind} {which}"
    if which in ("registry", "state", "store-choice"):  # every command reads these
        assert set(refused) >= {"should-run", "writeback"}, refused


@contextmanager
def alarm(seconds: int = 10) -> Iterator[None]:
    """Fail (rather than hang) a read that blocks, e.g. on a FIFO with no writer."""

    def ring(signum: int, frame: object) -> None:
        raise AssertionError("a read blocked")

    previous = signal.signal(signal.SIGALRM, ring)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _readers(root: Path, key: str) -> dict[str, list[Callable[[], Any]]]:
    """In-process, every reader of each file."""
    files = FileStore(root)
    return {
        "registry": [files.read_registry],
        "state": [lambda: files.read_goal("g")],
        "ledger": [
            lambda: files.ledger_all("g"),
            lambda: files.ledger_since("g", T0),
            lambda: ledger.last_event(files.ledger_path("g")),
            lambda: files.spend_receipt("g", "x"),
        ],
        "history": [
            lambda: files.read_history("g"),
            lambda: files.read_history("g", last=5),
            lambda: files.run_indexed("g", "r"),
        ],
        "receipts": [lambda: files.spend_receipt("g", "x")],
        "journal": [lambda: files.read_journal("g", key)],
        "scheduler": [lambda: files.read_scheduler("g")],
    }


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("which", sorted(set(FILES) - {"store-choice"}))
def test_every_reader_refuses_a_stored_file_that_is_not_a_file(
    template: tuple[Path, str], tmp_path: Path, which: str, kind: str
) -> None:
    root, key = _copy(template, tmp_path)
    path = _path(root, which, key)
    replace_with(path, kind, appended=which in APPENDED)
    before = tree_of_kinds(root)
    for read in _readers(root, key)[which]:
        with alarm(), pytest.raises(NotAFileError) as caught:
            read()
        assert str(path.relative_to(root)) in caught.value.message or path.name in caught.value.message
        assert caught.value.exit_code == ExitCode.STATE_INVALID
        assert str(tmp_path) not in caught.value.message
    if which != "receipts":  # derived: `store migrate` does not move it
        with alarm(), pytest.raises(StateInvalidError):
            files_bulk.read(FileStore(root))  # `store migrate` reads the whole store
    assert tree_of_kinds(root) == before


@pytest.mark.parametrize("kind", KINDS)
def test_a_run_record_or_a_kept_previous_version_that_is_not_a_file(
    template: tuple[Path, str], tmp_path: Path, kind: str
) -> None:
    root, _ = _copy(template, tmp_path)
    store = FileStore(root)
    run = next(p for p in store.runs_dir("g").glob("*.json"))
    replace_with(run, kind)
    with alarm(), pytest.raises(NotAFileError):
        store.read_run("g", run.stem)
    replace_with(root / ".loopx/goals/g/state.json.prev", kind)
    from loopx_core.doctor.quarantine import previous
    from loopx_core.models.records import GoalState

    with alarm():
        assert previous(store.goal_path("g"), GoalState) is None


@pytest.mark.parametrize("size", [0, 1, 5, 64 * 1024 - 1, 64 * 1024, 64 * 1024 + 1, 200_000])
def test_a_regular_file_is_read_whole_at_any_size_under_the_cap(tmp_path: Path, size: int) -> None:
    path = tmp_path / "f"
    data = os.urandom(size)
    path.write_bytes(data)
    assert read_bytes(path, what="x")[0] == data
    lines = [os.urandom(7).hex().encode() for _ in range(size // 15)]
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    assert list(ledger.reverse_lines(path)) == lines[::-1]


def test_a_line_over_the_cap_is_refused_without_reading_the_file_whole(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    with path.open("wb") as handle:  # sparse: 70 MiB of zeros and a newline, no line end before
        handle.truncate(70 * 1024 * 1024)
        handle.seek(0, 2)
        handle.write(b"\n")
    with alarm(), pytest.raises(NotAFileError, match="a line over 64 MiB"):
        list(ledger.reverse_lines(path))


def test_receipts_module_refuses_rather_than_replaces_a_fifo_index(
    template: tuple[Path, str], tmp_path: Path
) -> None:
    root, _ = _copy(template, tmp_path)
    store = FileStore(root)
    replace_with(store.receipts_path("g"), "fifo")
    with alarm(), pytest.raises(NotAFileError):
        receipts.load(store._receipt_sources("g"))
    assert store.receipts_path("g").is_fifo()


@pytest.mark.parametrize("kind", ["fifo", "folder", "dev-zero", "too-big"])
def test_doctor_repair_moves_a_receipt_index_that_is_not_a_file_and_the_next_spend_rebuilds_it(
    template: tuple[Path, str], tmp_path: Path, kind: str
) -> None:
    root, _ = _copy(template, tmp_path)
    index = root / ".loopx/goals/g/receipts.json"
    replace_with(index, kind)
    spend = [
        "quota",
        "spend",
        "-g",
        "g",
        "-a",
        "builder",
        "--manual",
        "--slots",
        "1",
        "--turn-instance-id",
        "x",
    ]
    assert run_loopx(*spend, root=root, timeout=30).exit_code == int(ExitCode.STATE_INVALID)
    report = run_loopx("doctor", "--repair", "--check", "state", "--format", "json", root=root, timeout=30)
    (finding,) = [f for f in json.loads(report.stdout)["findings"] if f["code"] == "not_a_file"]
    assert finding["status"] == "repaired" and finding["subject"]["file"] == ".loopx/goals/g/receipts.json"
    assert not index.exists() and not index.is_symlink()
    assert list((root / ".loopx/quarantine").rglob("receipts.json"))  # moved, never deleted
    assert run_loopx(*spend, root=root, timeout=30).exit_code == 0
    assert index.is_file() and index.stat().st_size < 1 << 20
