"""Class: `loopx doctor` never repairs through a symbolic link, and names what it cannot parse.

A goal's ledger that is a symbolic link to a file outside `.loopx/` with a torn last line is
reported (`ledger_torn_tail`, naming the link and why LoopX will not cut it) and `--repair`
leaves the linked file's bytes as they were: the finding stays (exit 9). A facade installed
with a `loopx` command that does not split into words (an unclosed quote) is reported as a
command that cannot run, and `--repair` re-installs it with this loopx's command.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import Cli, Project

LATER = "2026-11-29T13:00:00Z"


def doctor(cli: Cli, *args: str) -> tuple[int, dict[str, object]]:
    """`loopx doctor ARGS -f json`: its exit code and report."""
    result = cli("doctor", *args, "-f", "json", now=LATER)
    assert "Traceback" not in result.stderr and result.stderr.count("\n") <= 1, result.stderr
    return result.exit_code, json.loads(result.stdout)


def test_a_torn_ledger_behind_a_link_is_reported_and_never_cut(
    cli: Cli, project: Project, tmp_path: Path
) -> None:
    assert cli("goal", "add", "-g", "g", "-o", "Ship").exit_code == 0
    ledger = project.root / ".loopx/goals/g/events.jsonl"
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_bytes((ledger.read_bytes() if ledger.exists() else b"") + b'{"seq": 9, "ki')
    ledger.unlink(missing_ok=True)
    ledger.symlink_to(outside)
    before = outside.read_bytes()
    shown = ".loopx/goals/g/events.jsonl"
    for args in ((), ("--repair", "--dry-run"), ("--repair",)):
        code, report = doctor(cli, "--check", "state", *args)
        assert code == 9, report
        [finding] = report["findings"]  # type: ignore[misc]
        assert finding["code"] == "ledger_torn_tail"
        assert finding["message"] == f"{shown} (a symbolic link) ends in a line that was never completed"
        assert (
            finding["hint"]
            == f"{shown} is a symbolic link: LoopX never writes through one; put the file itself there"
        )
        assert finding["subject"] == {"goal_id": "g", "file": shown}
        assert str(tmp_path) not in json.dumps(report)
    assert outside.read_bytes() == before and ledger.is_symlink()


def test_a_facade_command_that_does_not_split_is_reported_and_repaired(cli: Cli, project: Project) -> None:
    install = cli(
        "workflow-skills", "--install", "--surface", "codex-app",
        "--target", str(project.root), "--loopx-command", "loopx 'unclosed",
    )  # fmt: skip
    assert install.exit_code == 0, install.stderr
    code, report = doctor(cli, "--check", "installation")
    assert code == 9
    [finding] = report["findings"]  # type: ignore[misc]
    assert finding["code"] == "facade_command_missing"
    assert (
        finding["message"] == 'the codex-app facade (project) runs "loopx \'unclosed", which is not on PATH'
    )
    code, report = doctor(cli, "--check", "installation", "--repair")
    assert code == 0 and report["summary"]["remaining"] == 0, report  # type: ignore[index]
    assert doctor(cli, "--check", "installation")[0] == 0
    assert "unclosed" not in (project.root / ".agents/skills/loopx/SKILL.md").read_text()
