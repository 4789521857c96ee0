"""Class: no command writes through a symbolic link that stands where a stored file should.

Observed: with `events.jsonl` linked to a file outside `.loopx/`, `doctor --repair` cut that
file's "torn tail" (emptying it) and the next spend appended a ledger line to it. A link may
name any file of the user's; LoopX's atomic writes replace the link itself, and an append
(the ledger, the run history) refuses one. Here every stored file of a lived-in project is
replaced by a link to an outside copy of itself (so every read still succeeds), and every
kind of command that writes runs: the outside file keeps its bytes, whatever the command says,
in one line with a documented exit code.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from loopx_core.errors import EXIT_CODES
from tests.builders import lived_in_project
from tests.conftest import run_loopx

STORED = {
    "registry": lambda key: "registry.json",
    "state": lambda key: "goals/g/state.json",
    "ledger": lambda key: "goals/g/events.jsonl",
    "history": lambda key: "goals/g/runs/index.jsonl",
    "receipts": lambda key: "goals/g/receipts.json",
    "journal": lambda key: f"goals/g/turns/{key[7:]}.json",
    "scheduler": lambda key: "goals/g/scheduler.json",
}
"""Each stored file of the lived-in project, under `.loopx/`, by the open turn's key."""
COMMANDS = {
    "writeback": lambda key: [
        "writeback",
        "-g",
        "g",
        "-a",
        "builder",
        "-k",
        key,
        "-s",
        "s",
        "--validation-status",
        "passed",
    ],
    "quota spend --manual": lambda key: [
        "quota",
        "spend",
        "-g",
        "g",
        "-a",
        "builder",
        "--manual",
        "--slots",
        "1",
    ],
    "todo add": lambda key: ["todo", "add", "-g", "g", "--title", "More"],
    "gate open": lambda key: ["gate", "open", "-g", "g", "--title", "Look"],
    "turn cancel": lambda key: ["turn", "cancel", "-g", "g", "-a", "builder", "-k", key],
    "doctor --repair": lambda key: ["doctor", "--repair"],
}
"""A command of every kind that writes: settlement, a manual charge, ops, a cancel, a repair."""


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("stored", sorted(STORED))
def test_a_linked_stored_file_is_never_written_through(tmp_path: Path, stored: str, command: str) -> None:
    root = tmp_path / "project"
    key = lived_in_project(root)
    path = root / ".loopx" / STORED[stored](key)
    if not path.exists():
        pytest.skip(f"the lived-in project keeps no {stored} file")
    outside = tmp_path / "outside" / path.name
    outside.parent.mkdir()
    shutil.copyfile(path, outside)
    before = outside.read_bytes()
    path.unlink()
    path.symlink_to(outside)
    done = run_loopx(*COMMANDS[command](key), "-f", "json", root=root)
    assert outside.read_bytes() == before, (stored, command, done.stdout, done.stderr)
    assert done.exit_code in {int(code) for code in EXIT_CODES}, done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) <= 1, done.stderr
