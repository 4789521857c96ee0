"""What a new user's trial from the wheel found (2026-12-07), each fixed at its class."""

from __future__ import annotations

import errno
import json
from pathlib import Path

from loopx_core.errors import ExitCode
from loopx_core.ops import goals
from loopx_core.store.lock import unusable
from tests.conftest import T0, Cli, Project


def test_a_project_sink_for_a_goal_the_project_lacks_is_refused(cli: Cli, project: Project) -> None:
    goals.add_goal(project.store, "g", "Objective", T0)
    missing = cli("notify", "add", "file://notices.jsonl", "--goal-id", "nope", "-f", "json")
    assert missing.exit_code == ExitCode.NOT_FOUND, missing.stderr
    assert json.loads(cli("notify", "list", "-f", "json").stdout)["sinks"] == []
    assert cli("notify", "add", "file://notices.jsonl", "--goal-id", "g").exit_code == 0
    assert (
        cli("notify", "add", "file://all.jsonl", "--goal-id", "nope", "--user").exit_code == 0
    )  # any project's


def test_a_lock_this_user_may_not_open_says_so(tmp_path: Path) -> None:
    """Root opens anything, so the error the lock meets is built here as the OS raises it."""
    path = tmp_path / ".loopx" / "locks" / "g.lock"
    denied = unusable(path, PermissionError(errno.EACCES, "Permission denied"))
    assert "Permission denied" in denied.message and "access to .loopx/" in denied.message
    assert "move it aside" not in denied.message and str(tmp_path) not in denied.message
    folder = unusable(path, IsADirectoryError(errno.EISDIR, "Is a directory"))
    assert "move it aside" in folder.message


def test_no_state_names_both_ways_to_point_at_a_project(cli: Cli, tmp_path: Path) -> None:
    from tests.conftest import run_loopx

    done = run_loopx("status", root=tmp_path / "nowhere")
    assert done.exit_code == ExitCode.NOT_FOUND
    assert "--root (or LOOPX_ROOT)" in done.stderr and str(tmp_path) not in done.stderr
