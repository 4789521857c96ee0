"""Class: a broken Python environment beside LoopX makes a command end in a traceback.

A distribution whose `entry_points.txt` importlib.metadata refuses (a line without `=`) breaks
whatever reads entry points: pluggy's host registry over every plugin. A command that needs it
ends in one line on stderr and exit 1 (the JSON error object too under `--format json`), never
a traceback. Every other command reads no entry point (a built-in host's plugin is loaded by
name, no model needs pydantic): it answers as in any environment.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders import demo_project
from tests.conftest import run_loopx

COMMANDS = [
    ("hosts", "list", "-f", "json"),
    ("hooks",),
    ("hook", "no-such-event", "-g", "demo", "-a", "builder"),
    ("heartbeat-prompt", "-g", "demo", "-a", "builder"),
]
"""Commands that ask every plugin: they read the entry points."""

ANSWERED = [
    ("--version",),
    ("goal", "list"),
    ("quota", "status", "-g", "demo", "-f", "json"),
    ("turn", "begin", "-g", "demo", "-a", "builder", "--todo-id", "t1", "-f", "json"),
    ("quota", "should-run", "-g", "demo", "-a", "builder", "-f", "json"),
    ("quota", "should-run", "-g", "demo", "-a", "builder", "--surface", "codex-app", "-f", "json"),
    ("hook", "claude-stop", "-g", "demo", "-a", "builder"),
    ("hook", "claude-stop", "--goal-id=demo"),
    ("heartbeat-prompt", "-g", "demo", "-a", "builder", "--surface", "codex-app"),
    ("heartbeat-prompt", "-g", "demo", "-a", "builder", "--surface=codex-app", "--help"),
]
"""Commands that read no entry point: they answer as in a sound environment."""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("project")
    return demo_project(root)


@pytest.fixture(scope="module")
def broken_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    site = tmp_path_factory.mktemp("site")
    info = site / "broken_meta-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-meta\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[console_scripts]\na line without an equals sign\n")
    return site


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_one_line_and_exit_1_never_a_traceback(
    project: Path, broken_site: Path, args: tuple[str, ...]
) -> None:
    result = run_loopx(*args, root=project, input="{}", env={"PYTHONPATH": str(broken_site)})
    assert "Traceback" not in result.stderr, result.stderr[-400:]
    assert result.exit_code == 1 and result.stderr.count("\n") == 1, (result.exit_code, result.stderr)
    assert str(project) not in result.stderr and str(broken_site) not in result.stderr
    if "json" in args:
        assert json.loads(result.stdout)["error"]["exit_code"] == 1


@pytest.mark.parametrize("args", ANSWERED, ids=" ".join)
def test_a_command_that_reads_no_entry_point_answers(
    project: Path, broken_site: Path, args: tuple[str, ...]
) -> None:
    result = run_loopx(*args, root=project, input="{}", env={"PYTHONPATH": str(broken_site)})
    assert result.exit_code == 0 and result.stderr == "", (result.exit_code, result.stderr)
    if "json" in args:
        json.loads(result.stdout)
