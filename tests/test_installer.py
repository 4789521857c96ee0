"""`loopx workflow-skills` on pre-populated targets: never clobber, never duplicate, always undo."""

from __future__ import annotations

import json
import os
import shlex
import tomllib
from pathlib import Path

import pytest

from tests.builders import facade_subjects, tree
from tests.conftest import Cli, Project
from tests.hostfiles import SETTINGS, USER_TOML


@pytest.fixture(autouse=True)
def _facade_subjects(project: Project) -> None:
    """The goals and agents these installs drive exist (an install refuses ones that do not)."""
    facade_subjects(project.store)


USER_MCP = {
    "mcpServers": {"github": {"command": "gh-mcp", "args": ["serve"], "env": {"TOKEN_FILE": "~/.gh"}}}
}
USER_AGENTS = "# Project rules\n\nAlways run `make test` before committing.\n"


@pytest.fixture
def target(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".codex").mkdir(parents=True)
    (root / ".codex/config.toml").write_text(USER_TOML)
    (root / ".mcp.json").write_text(json.dumps(USER_MCP, indent=4) + "\n")  # not our indent: must survive
    (root / ".claude").mkdir()
    (root / ".claude/settings.json").write_text(json.dumps(SETTINGS, indent=2) + "\n")
    (root / "AGENTS.md").write_text(USER_AGENTS)
    (root / "src").mkdir()
    (root / "src/main.py").write_text("print('hi')\n")
    return root


def skills(cli: Cli, *args: str, target: Path | None = None) -> object:
    extra = ["--target", str(target)] if target is not None else []
    return cli("workflow-skills", *args, *extra)


@pytest.mark.parametrize("surface", ["claude-code", "codex-app", "dsh"])
def test_install_reinstall_uninstall_round_trip(cli: Cli, target: Path, surface: str) -> None:
    before = tree(target)
    first = skills(cli, "--install", "--surface", surface, "-f", "json", target=target)
    assert first.exit_code == 0, first.stderr  # type: ignore[attr-defined]
    statuses = {f["status"] for f in first.json()["files"]}  # type: ignore[attr-defined]
    assert statuses <= {"create", "merge"} and first.json()["notices"]  # type: ignore[attr-defined]
    installed = tree(target)
    again = skills(cli, "--install", "--surface", surface, "-f", "json", target=target)
    assert {f["status"] for f in again.json()["files"]} == {"unchanged"}  # type: ignore[attr-defined]
    assert tree(target) == installed
    assert skills(cli, "--check", "--surface", surface, target=target).exit_code == 0  # type: ignore[attr-defined]
    gone = skills(cli, "--uninstall", "--surface", surface, "-f", "json", target=target)
    assert gone.exit_code == 0, gone.stderr  # type: ignore[attr-defined]
    assert tree(target) == before


def test_only_our_keys_change(cli: Cli, target: Path) -> None:
    skills(cli, "--install", "--surface", "claude-code", target=target)
    skills(cli, "--install", "--surface", "codex-app", target=target)
    config = tomllib.loads((target / ".codex/config.toml").read_text())
    user = tomllib.loads(USER_TOML)
    assert {k: v for k, v in config.items() if k != "mcp_servers"} == {
        k: v for k, v in user.items() if k != "mcp_servers"
    }
    assert config["mcp_servers"]["github"] == user["mcp_servers"]["github"]
    assert (target / ".codex/config.toml").read_text().startswith(USER_TOML)  # comments and layout kept
    mcp = json.loads((target / ".mcp.json").read_text())
    assert mcp["mcpServers"]["github"] == USER_MCP["mcpServers"]["github"] and "loopx" in mcp["mcpServers"]
    settings = json.loads((target / ".claude/settings.json").read_text())
    assert settings["permissions"] == SETTINGS["permissions"] and settings["model"] == "opus"
    assert (
        settings["hooks"]["Stop"][0] == SETTINGS["hooks"]["Stop"][0] and len(settings["hooks"]["Stop"]) == 2
    )
    assert (target / "src/main.py").read_text() == "print('hi')\n"


def test_user_edit_is_a_conflict_and_force_keeps_a_backup(cli: Cli, target: Path) -> None:
    skills(cli, "--install", "--surface", "claude-code", target=target)
    skill = target / ".claude/skills/loopx/SKILL.md"
    edited = skill.read_text() + "\nMy own notes.\n"
    skill.write_text(edited)
    kept = skills(cli, "--install", "--surface", "claude-code", "-f", "json", target=target)
    assert kept.exit_code == 5  # type: ignore[attr-defined]
    conflict = [f for f in kept.json()["files"] if f["status"] == "conflict"]  # type: ignore[attr-defined]
    assert [f["path"] for f in conflict] == [".claude/skills/loopx/SKILL.md"]
    assert skill.read_text() == edited
    assert skills(cli, "--check", "--surface", "claude-code", target=target).exit_code == 9  # type: ignore[attr-defined]
    forced = skills(cli, "--install", "--surface", "claude-code", "--force", "-f", "json", target=target)
    assert forced.exit_code == 0  # type: ignore[attr-defined]
    backups = forced.json()["backups"]  # type: ignore[attr-defined]
    assert len(backups) == 1 and (target / backups[0]).read_text() == edited
    assert backups[0].startswith(".loopx/backups/")  # shown relative to the target
    assert skill.read_text() != edited
    (target / backups[0]).replace(skill)  # the backup restores the user's version
    assert skill.read_text() == edited


def test_uninstall_keeps_a_user_edited_file(cli: Cli, target: Path) -> None:
    """All or nothing: the edited file stops the uninstall; --force removes it after a backup."""
    skills(cli, "--install", "--surface", "claude-code", target=target)
    command = target / ".claude/commands/loopx-status.md"
    command.write_text("mine now\n")
    installed = tree(target)
    result = skills(cli, "--uninstall", "--surface", "claude-code", "-f", "markdown", target=target)
    assert result.exit_code == 5 and "Nothing written" in result.stdout  # type: ignore[attr-defined]
    assert tree(target) == installed
    forced = skills(cli, "--uninstall", "--surface", "claude-code", "--force", "-f", "json", target=target)
    assert forced.exit_code == 0  # type: ignore[attr-defined]
    (backup,) = forced.json()["backups"]  # type: ignore[attr-defined]
    assert (target / backup).read_text() == "mine now\n"
    assert not command.exists() and not (target / ".claude/skills/loopx").exists()


def test_shared_skill_survives_until_its_last_owner_leaves(cli: Cli, target: Path) -> None:
    before = tree(target)
    skills(cli, "--install", "--surface", "codex-app", target=target)
    skills(cli, "--install", "--surface", "dsh", target=target)
    skill = target / ".agents/skills/loopx/SKILL.md"
    assert skill.exists()
    skills(cli, "--uninstall", "--surface", "codex-app", target=target)
    assert skill.exists() and (target / ".dsh").exists()
    assert skills(cli, "--check", "--surface", "dsh", target=target).exit_code == 0  # type: ignore[attr-defined]
    skills(cli, "--uninstall", "--surface", "dsh", target=target)
    assert tree(target) == before


def test_dry_run_prints_a_diff_and_writes_nothing(cli: Cli, target: Path) -> None:
    before = tree(target)
    result = skills(cli, "--install", "--surface", "codex-app", "--dry-run", "-f", "markdown", target=target)
    assert result.exit_code == 0  # type: ignore[attr-defined]
    out = result.stdout  # type: ignore[attr-defined]
    assert (
        "dry run, nothing written" in out
        and "+++ b/.codex/config.toml" in out
        and "+[mcp_servers.loopx]" in out
    )
    assert "--- /dev/null" in out  # new files diff against nothing
    assert tree(target) == before


def test_check_reports_missing_files(cli: Cli, target: Path) -> None:
    assert skills(cli, "--check", "--surface", "dsh", target=target).exit_code == 9  # type: ignore[attr-defined]
    skills(cli, "--install", "--surface", "dsh", target=target)
    assert skills(cli, "--check", "--surface", "dsh", target=target).exit_code == 0  # type: ignore[attr-defined]
    next((target / ".dsh").rglob("package.json")).unlink()
    drift = skills(cli, "--check", "--surface", "dsh", "-f", "json", target=target)
    assert drift.exit_code == 9 and any(d["problem"] == "missing" for d in drift.json()["drift"])  # type: ignore[attr-defined]


def test_refuses_symlinks_and_writes_nothing_outside(cli: Cli, target: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (target / ".agents").symlink_to(outside, target_is_directory=True)
    result = skills(cli, "--install", "--surface", "codex-app", target=target)
    assert result.exit_code == 7 and "symlink" in result.stderr  # type: ignore[attr-defined]
    assert list(outside.iterdir()) == []
    assert not (target / ".loopx").exists()


@pytest.mark.parametrize(
    ("surface", "env", "expect"),
    [
        ("claude-code", "CLAUDE_CONFIG_DIR", ["skills/loopx/SKILL.md", "settings.json", ".claude.json"]),
        ("codex-app", "CODEX_HOME", ["config.toml", "automations/loopx-demo-builder/automation.toml"]),
        ("dsh", "DSH_HOME", ["plugins/loopx-dsh/package.json"]),
    ],
)
def test_user_scope_honours_host_homes(
    cli: Cli, isolated_home: Path, tmp_path: Path, surface: str, env: str, expect: list[str]
) -> None:
    home = tmp_path / f"{env.lower()}-dir"
    os.environ[env] = str(home)
    try:
        result = skills(
            cli, "--install", "--surface", surface, "--scope", "user", "-g", "demo", "-a", "builder"
        )
        assert result.exit_code == 0, result.stderr  # type: ignore[attr-defined]
        for rel in expect:
            assert (home / rel).is_file(), rel
        assert (isolated_home / ".loopx/facades.json").is_file()
        assert skills(cli, "--uninstall", "--surface", surface, "--scope", "user").exit_code == 0  # type: ignore[attr-defined]
        assert not any(p.is_file() for p in home.rglob("*"))
    finally:
        del os.environ[env]


def test_values_are_quoted_for_their_format(cli: Cli, target: Path) -> None:
    weird = "/opt/my tools/lo\"op'x"
    for surface in ("claude-code", "codex-app"):
        assert (
            skills(
                cli,
                "--install",
                "--surface",
                surface,
                "--loopx-command",
                weird,
                "-g",
                "g-1",
                "-a",
                "a.b",
                target=target,
            ).exit_code
            == 0
        )  # type: ignore[attr-defined]
    assert json.loads((target / ".mcp.json").read_text())["mcpServers"]["loopx"]["command"] == weird
    assert (
        tomllib.loads((target / ".codex/config.toml").read_text())["mcp_servers"]["loopx"]["command"] == weird
    )
    hooks = json.loads((target / ".claude/settings.json").read_text())["hooks"]
    stop = next(h["hooks"][0]["command"] for h in hooks["Stop"] if "claude-stop" in h["hooks"][0]["command"])
    assert shlex.split(stop) == [weird, "hook", "claude-stop", "--goal-id", "g-1", "--agent-id", "a.b"]


def test_usage_errors(cli: Cli, target: Path) -> None:
    assert skills(cli, "--install", "--uninstall", "--surface", "dsh", target=target).exit_code == 2  # type: ignore[attr-defined]
    unknown = skills(cli, "--install", "--surface", "vim", target=target)
    assert unknown.exit_code == 2 and "unknown --surface 'vim'" in unknown.stderr  # type: ignore[attr-defined]
    assert skills(cli, "--install", "--surface", "dsh", "--layout", "plugin", target=target).exit_code == 2  # type: ignore[attr-defined]
    assert skills(cli, "--install", "--surface", "dsh", "-g", "Bad/Id", target=target).exit_code == 2  # type: ignore[attr-defined]


def test_reinstall_later_is_still_a_no_op(cli: Cli, tmp_path: Path) -> None:
    """The automation records when it was created; a re-install a day later must not rewrite it."""
    target = tmp_path / "user"
    which = ("--surface", "codex-app", "--scope", "user", "--target", str(target), "-g", "g", "-a", "a")
    assert cli("workflow-skills", "--install", *which, now="2026-11-29T12:00:00Z").exit_code == 0
    later = cli("workflow-skills", "--install", *which, "-f", "json", now="2026-11-30T12:00:00Z")
    assert {f["status"] for f in later.json()["files"]} == {"unchanged"}
    assert cli("workflow-skills", "--check", *which, now="2026-12-01T00:00:00Z").exit_code == 0


def test_private_files_stay_private(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """~/.claude.json is 0600: merging into it and restoring it keep its permissions."""
    home = tmp_path / "claude"
    home.mkdir()
    state = home / ".claude.json"
    state.write_text('{"userID": "secret"}\n')
    state.chmod(0o600)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home))
    assert skills(cli, "--install", "--surface", "claude-code", "--scope", "user").exit_code == 0  # type: ignore[attr-defined]
    assert state.stat().st_mode & 0o777 == 0o600 and "loopx" in state.read_text()
    assert skills(cli, "--uninstall", "--surface", "claude-code", "--scope", "user").exit_code == 0  # type: ignore[attr-defined]
    assert state.stat().st_mode & 0o777 == 0o600 and state.read_text() == '{"userID": "secret"}\n'


def test_dsh_agents_home_takes_the_user_skill(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "dsh"))
    monkeypatch.setenv("DSH_AGENTS_HOME", str(tmp_path / "agents"))
    assert skills(cli, "--install", "--surface", "dsh", "--scope", "user").exit_code == 0  # type: ignore[attr-defined]
    assert (tmp_path / "agents/skills/loopx/SKILL.md").is_file()
    assert (tmp_path / "dsh/plugins/loopx-dsh/package.json").is_file()
    assert not (tmp_path / "dsh/skills").exists()


def test_report_says_restore_for_shared_files_put_back_and_aligns_its_columns(cli: Cli, target: Path) -> None:
    skills(cli, "--install", "--surface", "claude-code", target=target)
    gone = skills(cli, "--uninstall", "--surface", "claude-code", "-f", "json", target=target)
    statuses = {f["path"]: f["status"] for f in gone.json()["files"]}  # type: ignore[attr-defined]
    assert statuses[".mcp.json"] == "restore" and statuses[".claude/commands/loopx-status.md"] == "remove"
    assert json.loads((target / ".mcp.json").read_text()) == USER_MCP
    skills(cli, "--install", "--surface", "claude-code", target=target)
    text = skills(cli, "--uninstall", "--surface", "claude-code", "-f", "markdown", target=target).stdout  # type: ignore[attr-defined]
    rows = [line for line in text.splitlines() if line.startswith("  ")]
    assert len(rows) == len(statuses)
    assert len({line.index(".", 2) if line.split()[1].startswith(".") else -1 for line in rows} - {-1}) == 1


def test_user_scope_paths_are_shown_from_home(cli: Cli) -> None:
    text = cli(
        "workflow-skills", "--install", "--surface", "claude-code", "--scope", "user", "-f", "markdown"
    ).stdout
    rows = [line.split()[1] for line in text.splitlines() if line.startswith("  ")]
    assert rows and all(path.startswith(("~/", "$")) for path in rows), rows
