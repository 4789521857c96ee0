"""Class: a project root that cannot be found is a usage error, never an internal one.

Observed: `LOOPX_ROOT='~nouser/x' loopx status` (a `~user` whose home is unknown) was
"internal error: RuntimeError: Could not determine home directory", and any command run in a
folder removed under the shell was "internal error: FileNotFoundError". Now each is one line,
exit 2 (a hook's 1: hosts read 2 as "block"), no traceback, no absolute path, nothing written:
a `~` with no home, a working folder that no longer exists, a root going round a loop of
symbolic links; for a hot command, a settlement command and typer's commands alike.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import LOOPX_BIN

COMMANDS = {
    "should-run": ["quota", "should-run", "-g", "g", "-a", "a"],
    "hook": ["hook", "claude-stop", "-g", "g", "-a", "a"],
    "turn begin": ["turn", "begin", "-g", "g", "-a", "a", "-t", "t1"],
    "status": ["status"],
    "init": ["init"],
    "doctor": ["doctor"],
    "install": ["workflow-skills", "--install", "--surface", "claude-code"],
}
SAYS = {
    "home": "the project root starts with a ~ whose home folder is unknown",
    "gone": "the current folder no longer exists",
    "loop": "the project root's path goes round a loop of symbolic links",
}


def run(tmp_path: Path, case: str, argv: list[str]) -> subprocess.CompletedProcess[str]:
    """`loopx ARGV` with an unusable root: `home` (LOOPX_ROOT `~nouser/x`), `gone` (run in a
    folder removed before it starts), `loop` (LOOPX_ROOT a link to a link to itself)."""
    env = {**os.environ}
    env.pop("LOOPX_ROOT", None)
    command = [str(LOOPX_BIN), *argv]
    if case == "home":
        env["LOOPX_ROOT"] = "~nouser-loopx/x"
    elif case == "loop":
        (tmp_path / "a").symlink_to(tmp_path / "b")
        (tmp_path / "b").symlink_to(tmp_path / "a")
        env["LOOPX_ROOT"] = str(tmp_path / "a")
    else:
        folder = tmp_path / "removed"
        folder.mkdir()
        command = ["sh", "-c", 'cd "$0" && rmdir "$0" && exec "$@"', str(folder), *command]
    return subprocess.run(
        command, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=60, check=False
    )


@pytest.mark.parametrize("case", sorted(SAYS))
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_an_unusable_root_is_one_usage_line(tmp_path: Path, name: str, case: str) -> None:
    proc = run(tmp_path, case, COMMANDS[name])
    lines = proc.stderr.splitlines()
    assert proc.returncode == (1 if name == "hook" else 2), (proc.returncode, proc.stderr)
    assert len(lines) == 1 and SAYS[case] in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr and str(tmp_path) not in proc.stderr + proc.stdout
    left = {p.name for p in tmp_path.iterdir()}
    assert left == ({"a", "b"} if case == "loop" else set()), left  # nothing written, nothing made
