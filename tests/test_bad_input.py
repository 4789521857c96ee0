"""Broken state files: a blocked_health packet or one error line, never a traceback, file untouched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loopx_core.ops import goals, todos
from loopx_core.store.files import FileStore
from tests.conftest import T0, run_loopx


@pytest.fixture
def demo_root(tmp_path: Path) -> Path:
    root = tmp_path / "p"
    root.mkdir()
    store = FileStore(root)
    store.init()
    goals.add_goal(store, "demo", "Ship", T0)
    goals.register_agent(store, "builder", [], T0)
    todos.add_todo(store, "demo", "Write parser", T0)
    return root


def _corruptions(path: Path) -> dict[str, bytes]:
    good = path.read_bytes()
    data = json.loads(good)
    return {
        "truncated": good[: len(good) // 2],
        "empty": b"",
        "not_json": b"<html>oops</html>",
        "wrong_type": json.dumps(
            {**data, "schema_version": 1, "goals" if "goals" in data else "todos": 7}
        ).encode(),
        "newer_schema": json.dumps({**data, "schema_version": 99}).encode(),
        "no_schema": json.dumps({k: v for k, v in data.items() if k != "schema_version"}).encode(),
    }


@pytest.mark.parametrize("which", ["registry", "state"])
@pytest.mark.parametrize(
    "kind", ["truncated", "empty", "not_json", "wrong_type", "newer_schema", "no_schema"]
)
def test_corrupt_file(demo_root: Path, which: str, kind: str) -> None:
    path = demo_root / ".loopx" / ("registry.json" if which == "registry" else "goals/demo/state.json")
    broken = _corruptions(path)[kind]
    path.write_bytes(broken)

    packet_run = run_loopx("quota", "should-run", "-g", "demo", "-a", "builder", root=demo_root)
    assert packet_run.exit_code == 4, packet_run.stderr
    assert "Traceback" not in packet_run.stderr
    packet = json.loads(packet_run.stdout)
    assert (packet["quota"]["state"], packet["decision"], packet["should_run"]) == (
        "blocked_health",
        "repair",
        False,
    )
    assert str(demo_root) not in packet_run.stdout  # relative paths only

    writers = {
        "registry": (
            ["todo", "add", "-g", "demo", "--title", "x"],
            ["goal", "stop", "-g", "demo"],
            ["agent", "register", "-a", "z"],
        ),
        "state": (
            ["todo", "add", "-g", "demo", "--title", "x"],
            ["todo", "claim", "-g", "demo", "-t", "t1", "-a", "builder"],
        ),
    }
    for args in writers[which]:
        result = run_loopx(*args, root=demo_root)
        expected = 8 if kind in ("newer_schema", "no_schema") else 4
        assert result.exit_code == expected, (args, result.stderr)
        assert result.stderr.count("\n") == 1 and result.stderr.startswith("loopx: error: ")
        assert "Traceback" not in result.stderr
    status = run_loopx("status", root=demo_root)
    assert "Traceback" not in status.stderr
    assert path.read_bytes() == broken


def test_blocked_health_markdown(demo_root: Path) -> None:
    (demo_root / ".loopx/goals/demo/state.json").write_text("{")
    result = run_loopx("quota", "should-run", "-g", "demo", "-a", "builder", "-f", "markdown", root=demo_root)
    assert result.exit_code == 4
    assert result.stdout.startswith("# should-run: REPAIR")


@pytest.mark.parametrize("bad", ["../etc", "a/b", "UPPER", "..", "x..y"])
def test_bad_ids_exit_2(demo_root: Path, bad: str) -> None:
    for args in (
        ["quota", "should-run", "-g", bad, "-a", "builder"],
        ["goal", "add", "-g", bad, "-o", "x"],
        ["agent", "register", "-a", bad],
        ["todo", "add", "-g", "demo", "--title", "x", "--todo-id", bad],
    ):
        result = run_loopx(*args, root=demo_root)
        assert result.exit_code == 2, (args, result.stderr)
        assert "invalid" in result.stderr and "Traceback" not in result.stderr
    assert not (demo_root.parent / "etc").exists()


def test_uninitialised_root(tmp_path: Path) -> None:
    result = run_loopx("quota", "should-run", "-g", "demo", "-a", "a", root=tmp_path)
    assert result.exit_code == 3 and "run `loopx init`" in result.stderr
    assert not (tmp_path / ".loopx").exists()
