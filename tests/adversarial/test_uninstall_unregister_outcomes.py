"""Class: what uninstall says about the host command it runs to unregister LoopX.

Uninstalling the DSH facade runs `dsh plugin --profile web remove loopx-dsh` when `dsh` is on
PATH. Whatever that program does, the uninstall finishes (exit 0, the facade's files gone)
and one notice says what happened: a dry run names the command it would run and runs
nothing; a command that fails names its exit code; a program that cannot be started at all
(not a valid executable) says so and asks for it to be run by hand. The program is a stand-in
on PATH here (the real DSH's own unregistering is tests/adversarial/test_host_lifecycle.py's).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Cli

COMMAND = "dsh plugin --profile web remove loopx-dsh"


def skills(cli: Cli, *args: str) -> Any:
    """`loopx workflow-skills ARGS -f json` (in-process), its JSON report."""
    result = cli("workflow-skills", *args, "-f", "json")
    assert result.exit_code == 0 and "Traceback" not in result.stderr, result.stderr
    return result.json()


@pytest.fixture
def fake_dsh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty `dsh` first on PATH, for the test to fill; it records that it ran."""
    folder = tmp_path / "bin"
    folder.mkdir()
    program = folder / "dsh"
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")
    return program


def installed(cli: Cli, target: Path) -> None:
    """The DSH facade, installed into `target`."""
    skills(cli, "--install", "--surface", "dsh", "--target", str(target))
    assert (target / ".dsh/plugins/loopx-dsh").is_dir()


def test_a_dry_run_names_the_command_and_runs_nothing(cli: Cli, tmp_path: Path, fake_dsh: Path) -> None:
    ran = tmp_path / "ran"
    fake_dsh.write_text(f"#!/bin/sh\ntouch {ran}\n")
    fake_dsh.chmod(0o755)
    installed(cli, tmp_path / "p")
    report = skills(cli, "--uninstall", "--surface", "dsh", "--target", str(tmp_path / "p"), "--dry-run")
    assert f"Would run `{COMMAND}` to take LoopX out of DSH (DeepSeek Harness)." in report["notices"]
    assert not ran.exists() and (tmp_path / "p/.dsh/plugins/loopx-dsh").is_dir()


@pytest.mark.parametrize("code", [1, 3, 127])
def test_a_failing_command_is_named_with_its_exit_code(
    cli: Cli, tmp_path: Path, fake_dsh: Path, code: int
) -> None:
    args = tmp_path / "args"
    fake_dsh.write_text(f'#!/bin/sh\necho "$@" > {args}\nexit {code}\n')
    fake_dsh.chmod(0o755)
    installed(cli, tmp_path / "p")
    report = skills(cli, "--uninstall", "--surface", "dsh", "--target", str(tmp_path / "p"))
    assert f"Ran `{COMMAND}`: exit {code} (LoopX was probably not registered there)." in report["notices"]
    assert args.read_text() == "plugin --profile web remove loopx-dsh\n"
    assert not (tmp_path / "p/.dsh/plugins/loopx-dsh").exists()


def test_a_program_that_cannot_start_asks_to_be_run_by_hand(cli: Cli, tmp_path: Path, fake_dsh: Path) -> None:
    fake_dsh.write_bytes(b"\x7fELF not really a program\n")
    fake_dsh.chmod(0o755)
    installed(cli, tmp_path / "p")
    report = skills(cli, "--uninstall", "--surface", "dsh", "--target", str(tmp_path / "p"))
    assert f"`{COMMAND}` could not run (Exec format error): run it by hand." in report["notices"]
    assert not (tmp_path / "p/.dsh/plugins/loopx-dsh").exists()
    assert str(tmp_path) not in " ".join(report["notices"])
