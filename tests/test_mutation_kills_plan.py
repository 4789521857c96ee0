"""Tests for mutants of installer/loopx_installer/plan.py the rest of the suite let live: what an
uninstall reports and does for shared files, files already gone, unreadable files, a LoopX part
removed by hand, and the containers LoopX created inside a merged file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders import tree
from tests.conftest import Cli


def skills(cli: Cli, target: Path, *args: str):  # type: ignore[no-untyped-def]
    return cli("workflow-skills", *args, "--target", str(target), "-f", "json")


def entries(result) -> dict[str, dict]:  # type: ignore[no-untyped-def,type-arg]
    return {f["path"]: f for f in result.json()["files"]}


@pytest.fixture
def target(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    return root


def test_a_shared_file_is_unchanged_while_another_host_uses_it(cli: Cli, target: Path) -> None:
    assert skills(cli, target, "--install", "--surface", "codex-app").exit_code == 0
    assert skills(cli, target, "--install", "--surface", "dsh").exit_code == 0
    gone = skills(cli, target, "--uninstall", "--surface", "codex-app")
    shared = entries(gone)[".agents/skills/loopx/SKILL.md"]
    assert (shared["status"], shared["detail"]) == ("unchanged", "still used by dsh")


def test_a_file_already_gone_is_reported_as_removed(cli: Cli, target: Path) -> None:
    installed = skills(cli, target, "--install", "--surface", "claude-code")
    owned = next(p for p, f in entries(installed).items() if f["status"] == "create" and p.endswith(".md"))
    (target / owned).unlink()
    gone = skills(cli, target, "--uninstall", "--surface", "claude-code")
    assert gone.exit_code == 0, gone.stderr
    assert (entries(gone)[owned]["status"], entries(gone)[owned]["detail"]) == ("remove", "already gone")
    assert not (target / owned).exists()


def test_an_unreadable_file_is_a_hard_conflict(cli: Cli, target: Path) -> None:
    """Without --force nothing is written; --force writes the rest and still leaves it alone."""
    installed = skills(cli, target, "--install", "--surface", "claude-code")
    owned = next(p for p, f in entries(installed).items() if f["status"] == "create" and p.endswith(".md"))
    (target / owned).unlink()
    (target / owned).mkdir()  # a folder where LoopX's file was
    before = tree(target)
    refused = skills(cli, target, "--uninstall", "--surface", "claude-code")
    assert refused.exit_code == 5 and entries(refused)[owned]["status"] == "conflict", refused.stdout
    assert entries(refused)[owned]["detail"] == f"{owned} is not a regular file; left unchanged"
    assert tree(target) == before  # all or nothing
    forced = skills(cli, target, "--uninstall", "--surface", "claude-code", "--force")
    assert forced.exit_code == 5 and entries(forced)[owned]["status"] == "conflict", forced.stdout
    assert (target / owned).is_dir() and not (target / ".mcp.json").exists()


def test_a_loopx_part_removed_by_hand_leaves_the_file_unchanged(cli: Cli, target: Path) -> None:
    (target / ".mcp.json").write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}}) + "\n")
    assert skills(cli, target, "--install", "--surface", "claude-code").exit_code == 0
    data = json.loads((target / ".mcp.json").read_text())
    del data["mcpServers"]["loopx"]
    (target / ".mcp.json").write_text(json.dumps(data, indent=2) + "\n")
    edited = (target / ".mcp.json").read_bytes()
    gone = skills(cli, target, "--uninstall", "--surface", "claude-code")
    entry = entries(gone)[".mcp.json"]
    assert (entry["status"], entry["detail"]) == ("unchanged", "LoopX's part was already gone")
    assert (target / ".mcp.json").read_bytes() == edited


def test_containers_loopx_created_in_a_merged_file_go_with_it(cli: Cli, target: Path) -> None:
    (target / ".claude").mkdir()
    settings = target / ".claude/settings.json"
    settings.write_text(json.dumps({"permissions": {"allow": []}}, indent=2) + "\n")
    assert skills(cli, target, "--install", "--surface", "claude-code").exit_code == 0
    data = json.loads(settings.read_text())
    assert "hooks" in data
    settings.write_text(json.dumps({**data, "model": "opus"}, indent=2) + "\n")  # the user's own key, later
    gone = skills(cli, target, "--uninstall", "--surface", "claude-code")
    assert entries(gone)[".claude/settings.json"]["status"] == "merge"
    assert json.loads(settings.read_text()) == {
        "permissions": {"allow": []},
        "model": "opus",
    }  # no "hooks" left


def test_containers_the_user_had_stay_after_loopx_leaves(cli: Cli, target: Path) -> None:
    (target / ".claude").mkdir()
    settings = target / ".claude/settings.json"
    settings.write_text(json.dumps({"hooks": {}, "env": {}}, indent=2) + "\n")
    assert skills(cli, target, "--install", "--surface", "claude-code").exit_code == 0
    data = json.loads(settings.read_text())
    settings.write_text(json.dumps({**data, "model": "opus"}, indent=2) + "\n")
    assert skills(cli, target, "--uninstall", "--surface", "claude-code").exit_code == 0
    assert json.loads(settings.read_text()) == {"hooks": {}, "env": {}, "model": "opus"}


def test_an_edited_owned_file_is_kept_unless_forced(cli: Cli, target: Path) -> None:
    installed = skills(cli, target, "--install", "--surface", "claude-code")
    owned = next(p for p, f in entries(installed).items() if f["status"] == "create" and p.endswith(".md"))
    (target / owned).write_text("mine now\n")
    kept = skills(cli, target, "--uninstall", "--surface", "claude-code")
    entry = entries(kept)[owned]
    assert kept.exit_code == 5
    assert (entry["status"], entry["detail"]) == (
        "conflict",
        "edited since LoopX wrote it; kept (use --force to remove it)",
    )
    forced = skills(cli, target, "--uninstall", "--surface", "claude-code", "--force")
    entry = entries(forced)[owned]
    assert (entry["status"], entry["detail"]) == (
        "remove",
        "edited since LoopX wrote it; removed (--force), backup kept",
    )
    assert not (target / owned).exists() and len(forced.json()["backups"]) == 1


def test_a_file_loopx_replaced_with_force_comes_back_at_uninstall(cli: Cli, target: Path) -> None:
    command = target / ".claude/commands/loopx-status.md"
    command.parent.mkdir(parents=True)
    command.write_text("my own status command\n")
    assert skills(cli, target, "--install", "--surface", "claude-code").exit_code == 5  # a conflict
    assert skills(cli, target, "--install", "--surface", "claude-code", "--force").exit_code == 0
    assert command.read_text() != "my own status command\n"
    gone = skills(cli, target, "--uninstall", "--surface", "claude-code")
    assert gone.exit_code == 0, gone.stdout
    assert entries(gone)[".claude/commands/loopx-status.md"]["status"] == "restore"
    assert command.read_text() == "my own status command\n"


def test_a_folder_where_loopx_would_write_is_a_hard_conflict(cli: Cli, target: Path) -> None:
    blocker = target / ".claude/commands/loopx-status.md"
    blocker.mkdir(parents=True)
    before = tree(target)
    for extra in ((), ("--force",)):
        refused = skills(cli, target, "--install", "--surface", "claude-code", *extra)
        assert refused.exit_code == 5, refused.stdout
        entry = entries(refused)[".claude/commands/loopx-status.md"]
        assert entry["status"] == "conflict" and "not a regular file" in entry["detail"], entry
        if not extra:
            assert tree(target) == before  # nothing written
    assert blocker.is_dir()  # --force never replaces what it cannot read


def test_a_reinstall_with_another_command_updates_owned_files_and_replaces_merged_parts(
    cli: Cli, target: Path
) -> None:
    """LoopX's own unedited files are updated, and its old part of a merged file leaves with them."""
    assert skills(cli, target, "--install", "--surface", "claude-code").exit_code == 0
    again = skills(cli, target, "--install", "--surface", "claude-code", "--loopx-command", "/opt/lx")
    assert again.exit_code == 0, again.stdout
    statuses = {path: f["status"] for path, f in entries(again).items()}
    assert statuses == {
        ".claude/skills/loopx/SKILL.md": "update",
        ".claude/commands/loopx-status.md": "update",
        ".mcp.json": "merge",
        ".claude/settings.json": "merge",
    }
    settings = (target / ".claude" / "settings.json").read_text()
    assert settings.count("/opt/lx hook") == 2  # the new command, and only it
    assert settings.count("hook claude-stop") == settings.count("hook claude-session-start") == 1


def test_a_merged_file_the_user_emptied_of_their_part_goes_with_loopx_s(cli: Cli, target: Path) -> None:
    settings = target / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"theirs": 1}\n')
    assert skills(cli, target, "--install", "--surface", "claude-code").exit_code == 0
    data = json.loads(settings.read_text())
    del data["theirs"]
    settings.write_text(json.dumps(data, indent=2) + "\n")
    gone = skills(cli, target, "--uninstall", "--surface", "claude-code")
    assert gone.exit_code == 0, gone.stdout
    assert (
        entries(gone)[".claude/settings.json"]["status"],
        entries(gone)[".claude/settings.json"]["detail"],
    ) == (
        "merge",
        "LoopX's part taken out",
    )
    assert not settings.exists()


def test_a_second_install_reports_every_file_by_its_path_as_unchanged(cli: Cli, target: Path) -> None:
    first = skills(cli, target, "--install", "--surface", "claude-code")
    again = skills(cli, target, "--install", "--surface", "claude-code")
    assert again.exit_code == 0, again.stdout
    assert {path: f["status"] for path, f in entries(again).items()} == dict.fromkeys(
        entries(first), "unchanged"
    )


def test_loopx_s_entries_already_in_a_file_it_did_not_write_are_named_in_the_conflict(
    cli: Cli, target: Path
) -> None:
    installed = skills(cli, target / "elsewhere", "--install", "--surface", "claude-code")
    assert installed.exit_code == 0
    settings = target / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text((target / "elsewhere" / ".claude" / "settings.json").read_text())  # copied by hand
    refused = skills(cli, target, "--install", "--surface", "claude-code")
    assert refused.exit_code == 5
    assert entries(refused)[".claude/settings.json"]["detail"] == (
        "hooks.SessionStart[], hooks.Stop[] already there and not written by LoopX; kept (use --force to replace it)"
    )
