"""Class: whatever is in place of a lock file (or of the locks folder), a command that locks
refuses in one line with exit 4 and no local path, and writes nothing."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.builders import build_project, tree
from tests.conftest import run_loopx

DAMAGES = ("folder", "dangling link", "link loop", "locks is a file")
COMMANDS = {
    "g": ("todo", "add", "-g", "g", "--title", "x"),
    "registry": ("agent", "register", "-a", "newcomer"),
}


def _damage(root: Path, lock: str, how: str) -> None:
    locks = root / ".loopx" / "locks"
    path = locks / f"{lock}.lock"
    if how == "locks is a file":
        shutil.rmtree(locks)
        locks.write_text("not a folder")
        return
    path.unlink(missing_ok=True)
    if how == "folder":
        path.mkdir()
    elif how == "dangling link":
        os.symlink(root / "nowhere" / "x", path)
    else:
        os.symlink(path, path)


@pytest.mark.parametrize("how", DAMAGES)
@pytest.mark.parametrize("lock", sorted(COMMANDS))
def test_a_damaged_lock_is_one_line_exit_4(tmp_path: Path, lock: str, how: str) -> None:
    build_project(tmp_path)
    _damage(tmp_path, lock, how)
    before = tree(tmp_path)
    result = run_loopx(*COMMANDS[lock], "-f", "json", root=tmp_path)
    assert result.exit_code == 4, (result.exit_code, result.stderr)
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    assert str(tmp_path) not in result.stderr + result.stdout
    assert tree(tmp_path) == before  # nothing written
