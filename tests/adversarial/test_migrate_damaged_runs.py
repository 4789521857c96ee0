"""Class: a file store whose run records are damaged is refused by `store migrate`, nothing written.

`loopx store migrate` reads the whole source before writing anything. A run record whose
Markdown half is gone, whose JSON is not JSON, or a run history line that is no entry is one
exit-4 line naming the file under `.loopx/` (never the full path); the target folder gets no
`.loopx/`, the source's bytes are unchanged, and the project keeps using its files. A folder
under `goals/` whose name is no goal id is no goal: it is skipped, not copied, not refused.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from loopx_core.errors import ExitCode
from tests.builders import demo_project
from tests.conftest import run_loopx


@pytest.fixture(scope="module")
def with_a_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo project after one driven turn: a run record (JSON and Markdown) and its history line."""
    root = demo_project(tmp_path_factory.mktemp("base") / "project")
    ran = run_loopx(
        "turn", "run-once", "-g", "demo", "-a", "builder",
        "--host-command", "true", "--validation-command", "true",
        root=root, now="2026-11-29T12:10:00Z",
    )  # fmt: skip
    assert ran.exit_code == 0, ran.stderr
    return root


def runs(root: Path) -> Path:
    """The demo goal's run folder."""
    return root / ".loopx/goals/demo/runs"


def _lose_markdown(root: Path) -> str:
    [markdown] = runs(root).glob("run-*.md")
    markdown.unlink()
    return f"run record not found at .loopx/goals/demo/runs/{markdown.name}"


def _garble_json(root: Path) -> str:
    [record] = runs(root).glob("run-*.json")
    record.write_text("{")
    return (
        f"run record goals/demo/runs/{record.name} is unreadable: "
        "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"
    )


def _garble_history(root: Path) -> str:
    with (runs(root) / "index.jsonl").open("a") as history:
        history.write('{"run_id": 7}\n')
    return "a line of goals/demo/runs/index.jsonl is damaged: repair the history before moving the store"


DAMAGE: dict[str, Callable[[Path], str]] = {
    "markdown gone": _lose_markdown,
    "json garbled": _garble_json,
    "history line": _garble_history,
}


def files_of(root: Path) -> dict[str, bytes]:
    """Every file under `root`, by relative path."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_run_record_is_refused_and_nothing_is_written(
    with_a_run: Path, tmp_path: Path, damage: str
) -> None:
    source = tmp_path / "project"
    shutil.copytree(with_a_run, source, symlinks=True)
    message = DAMAGE[damage](source)
    before = files_of(source)
    target = tmp_path / "target"
    result = run_loopx("store", "migrate", "--to", "files", str(target), "-f", "json", root=source)
    assert result.exit_code == ExitCode.STATE_INVALID, result.stderr
    assert result.stderr == f"loopx: error: {message}\n"
    assert json.loads(result.stdout)["error"]["message"] == message
    assert str(tmp_path) not in result.stdout + result.stderr
    assert not (target / ".loopx").exists()
    assert files_of(source) == before


def test_a_folder_that_is_no_goal_id_is_skipped(with_a_run: Path, tmp_path: Path) -> None:
    source = tmp_path / "project"
    shutil.copytree(with_a_run, source, symlinks=True)
    (source / ".loopx/goals/Not A Goal").mkdir()
    (source / ".loopx/goals/Not A Goal/state.json").write_text("{")
    target = tmp_path / "target"
    result = run_loopx("store", "migrate", "--to", "files", str(target), "-f", "json", root=source)
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert (
        report["counts"]["goals"] == 1 and report["counts"]["runs"] == 1 and report["counts"]["history"] == 1
    )
    assert sorted(p.name for p in (target / ".loopx/goals").iterdir()) == ["demo"]
    assert files_of(target / ".loopx/goals/demo/runs") == files_of(runs(source))
