"""Class: the host's side of an install's life. Keys the host edits are the host's; every goal/agent
pair keeps its heartbeat; `--check` and re-install reuse what was installed; uninstall undoes the
host's registration and says so; notes fit the operation, scope and layout.

Each test names the observed case of issue 9 (item 12) it covers. The real host CLIs judge the
unregistering (tests/hostclis.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests import hostclis
from tests.builders import facade_subjects, tree
from tests.conftest import LOOPX_BIN, T0_ISO, Cli, Project


@pytest.fixture(autouse=True)
def _facade_subjects(project: Project) -> None:
    """The goals and agents these installs drive exist (an install refuses ones that do not)."""
    facade_subjects(project.store)


AUTOMATION = "automations/loopx-{goal}-{agent}/automation.toml"


def skills(cli: Cli, *args: str, now: str | None = None) -> Any:
    """`loopx workflow-skills ARGS` (in-process: an exception fails the test)."""
    result = cli("workflow-skills", *args, now=now)
    assert "Traceback" not in result.stdout + result.stderr
    return result


def _host_edit(path: Path, rrule: str, status: str) -> str:
    """What the Codex App does to an automation when the heartbeat asks it to change the schedule."""
    text = path.read_text()
    data = tomllib.loads(text)
    text = text.replace(f'rrule = "{data["rrule"]}"', f'rrule = "{rrule}"')
    text = text.replace('status = "ACTIVE"', f'status = "{status}"')
    text = text.replace(f"updated_at = {data['updated_at']}", "updated_at = 1900000000000")
    path.write_text(text)
    return text


def test_codex_may_edit_its_automation_schedule(cli: Cli, isolated_home: Path) -> None:
    """Item 12: Codex edits its automation's rrule (the heartbeat asks it to): no drift, re-install keeps it."""
    user = ("--surface", "codex-app", "--scope", "user")
    assert skills(cli, "--install", *user, "-g", "demo", "-a", "builder").exit_code == 0
    automation = isolated_home / "codex_home" / AUTOMATION.format(goal="demo", agent="builder")
    edited = _host_edit(automation, "FREQ=HOURLY;INTERVAL=2", "PAUSED")
    check = skills(cli, "--check", *user, "-f", "json", now="2026-11-30T12:00:00Z")
    assert check.exit_code == 0, check.json()["drift"]
    again = skills(cli, "--install", *user, "-f", "json", now="2026-11-30T12:00:00Z")
    assert again.exit_code == 0 and {f["status"] for f in again.json()["files"]} == {"unchanged"}
    assert automation.read_text() == edited
    automation.write_text(edited.replace('kind = "heartbeat"', 'kind = "cron"'))  # not the App's key
    assert skills(cli, "--check", *user).exit_code == 9
    assert skills(cli, "--install", *user).exit_code == 5
    automation.write_text(edited)
    assert skills(cli, "--uninstall", *user).exit_code == 0 and not automation.exists()


def test_a_second_goal_agent_heartbeat_does_not_replace_the_first(cli: Cli, isolated_home: Path) -> None:
    """Item 12: a second goal/agent heartbeat at user scope adds its automation beside the first."""
    user = ("--surface", "codex-app", "--scope", "user")
    before = tree(isolated_home)
    assert skills(cli, "--install", *user, "-g", "g1", "-a", "a1").exit_code == 0
    assert skills(cli, "--install", *user, "-g", "g2", "-a", "a2").exit_code == 0
    codex = isolated_home / "codex_home"
    first, second = (codex / AUTOMATION.format(goal=g, agent=a) for g, a in (("g1", "a1"), ("g2", "a2")))
    assert first.is_file() and second.is_file()
    assert skills(cli, "--check", *user).exit_code == 0
    assert skills(cli, "--check", *user, "-g", "g1", "-a", "a1").exit_code == 0
    assert skills(cli, "--install", *user, "-f", "json").json()["files"]  # re-install keeps both
    assert first.is_file() and second.is_file()
    odd = skills(cli, "--uninstall", *user, "-g", "g9", "-a", "a9")
    assert odd.exit_code == 2 and "g1/a1" in odd.stderr
    assert skills(cli, "--uninstall", *user, "-g", "g1", "-a", "a1").exit_code == 0
    assert not first.exists() and second.is_file()
    assert skills(cli, "--check", *user).exit_code == 0
    assert skills(cli, "--uninstall", *user).exit_code == 0
    assert tree(isolated_home) == before


@pytest.mark.parametrize(
    ("surface", "selectors"),
    [
        ("claude-code", ("--layout", "plugin", "-g", "demo", "-a", "builder")),
        ("claude-code", ("-g", "demo", "-a", "builder", "--loopx-command", "/opt/lx")),
        ("dsh", ("-g", "demo", "-a", "builder")),
        ("codex-app", ("--scope", "user", "-g", "demo", "-a", "builder")),
    ],
)
def test_check_and_reinstall_reuse_the_recorded_selectors(
    cli: Cli, tmp_path: Path, surface: str, selectors: tuple[str, ...]
) -> None:
    """Item 12: `--check` without repeating the install's --layout/-g/-a is clean; re-install is a no-op."""
    target = ("--surface", surface, "--target", str(tmp_path / "t"))
    assert skills(cli, "--install", *target, *selectors).exit_code == 0
    installed = tree(tmp_path / "t")
    check = skills(cli, "--check", *target, "-f", "json")
    assert check.exit_code == 0, check.json()["drift"]
    again = skills(cli, "--install", *target, "-f", "json")
    assert {f["status"] for f in again.json()["files"]} == {"unchanged"}
    assert tree(tmp_path / "t") == installed
    assert skills(cli, "--uninstall", *target).exit_code == 0
    assert [p for p in (tmp_path / "t").rglob("*") if p.is_file()] == []


def _with_hosts(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    """This process's environment as the host CLIs see it (PATH with them, every home in `home`)."""
    for name, value in hostclis.env(home).items():
        if name in ("PATH", "HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "DSH_HOME", "TMPDIR", "CI"):
            monkeypatch.setenv(name, value)
    monkeypatch.delenv("DSH_AGENTS_HOME", raising=False)


def test_uninstall_unlinks_the_dsh_package(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Item 12: uninstall used to leave DSH's profile pointing at a deleted package (`--dump-config` failed)."""
    dsh = hostclis.require("dsh")
    hostclis.require("pnpm")
    home, project = tmp_path / "home", tmp_path / "proj"
    assert skills(cli, "--install", "--surface", "dsh", "--target", str(project)).exit_code == 0
    package = project / ".dsh/plugins/loopx-dsh"
    added = hostclis.run(
        [str(dsh), "plugin", "--profile", "web", "add", "-w", f"link:{package}"], home, timeout=300
    )
    assert added.returncode == 0, added.stdout + added.stderr
    _with_hosts(monkeypatch, home)
    gone = skills(cli, "--uninstall", "--surface", "dsh", "--target", str(project), "-f", "json")
    assert gone.exit_code == 0, gone.stderr
    assert "Ran `dsh plugin --profile web remove loopx-dsh`." in gone.json()["notices"]
    assert not package.exists()
    dumped = hostclis.run([str(dsh), "--profile", "web", "--dump-config"], home)
    assert dumped.returncode == 0, dumped.stderr
    assert "# == loopx-dsh" not in dumped.stdout


def test_uninstall_removes_the_claude_marketplace(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Item 12: uninstall used to leave Claude's marketplace (and the plugin) registered."""
    claude = hostclis.require("claude")
    home, bundle = tmp_path / "home", tmp_path / "bundle"
    assert (
        skills(
            cli, "--install", "--surface", "claude-code", "--layout", "plugin", "--target", str(bundle)
        ).exit_code
        == 0
    )
    for args in (["plugin", "marketplace", "add", str(bundle)], ["plugin", "install", "loopx@loopx"]):
        done = hostclis.run([str(claude), *args], home)
        assert done.returncode == 0, done.stdout + done.stderr
    _with_hosts(monkeypatch, home)
    gone = skills(cli, "--uninstall", "--surface", "claude-code", "--target", str(bundle), "-f", "json")
    assert gone.exit_code == 0, gone.stderr
    notes = gone.json()["notices"]
    assert "Ran `claude plugin uninstall loopx@loopx`." in notes
    assert "Ran `claude plugin marketplace remove loopx`." in notes
    listed = hostclis.run([str(claude), "plugin", "marketplace", "list"], home)
    assert "loopx" not in listed.stdout, listed.stdout
    plugins = hostclis.run([str(claude), "plugin", "list"], home)
    assert "loopx@loopx" not in plugins.stdout, plugins.stdout


def test_uninstall_without_the_host_cli_prints_the_exact_command(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Item 12: where the host CLI is not found, uninstall prints the command to run instead."""
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    target = ("--surface", "dsh", "--target", str(tmp_path / "t"))
    assert skills(cli, "--install", *target).exit_code == 0
    gone = skills(cli, "--uninstall", *target, "-f", "json")
    assert gone.exit_code == 0
    assert any(
        n.startswith("Run `dsh plugin --profile web remove loopx-dsh`") for n in gone.json()["notices"]
    )
    dry = skills(cli, "--uninstall", *target, "--dry-run", "-f", "json")
    assert dry.json()["notices"] == []  # nothing installed any more: nothing to unregister


@pytest.mark.parametrize(
    ("surface", "extra"),
    [
        ("claude-code", ()),
        ("claude-code", ("--layout", "plugin")),
        ("claude-code", ("--scope", "user")),
        ("codex-app", ()),
        ("codex-app", ("--scope", "user", "-g", "g", "-a", "a")),
        ("dsh", ()),
        ("dsh", ("--scope", "user")),
    ],
)
def test_uninstall_prints_its_own_note(
    cli: Cli, tmp_path: Path, surface: str, extra: tuple[str, ...]
) -> None:
    """Item 12: uninstall printed the install note; now each operation, scope and layout has its own."""
    target = ("--surface", surface, "--target", str(tmp_path / "t"), "--loopx-command", "loopx")
    put = skills(cli, "--install", *target, *extra, "-f", "json")
    gone = skills(cli, "--uninstall", *target, "-f", "json")
    assert put.exit_code == gone.exit_code == 0
    put_notes, gone_notes = put.json()["notices"], gone.json()["notices"]
    assert put_notes and gone_notes and set(put_notes).isdisjoint(gone_notes)
    assert not any(str(tmp_path) in n for n in put_notes + gone_notes)


def test_codex_project_note_names_the_user_config(cli: Cli, tmp_path: Path) -> None:
    """Item 12: the trust note named the project's config.toml; trust lives in `$CODEX_HOME/config.toml`."""
    put = skills(cli, "--install", "--surface", "codex-app", "--target", str(tmp_path / "t"), "-f", "json")
    (note,) = [n for n in put.json()["notices"] if "trust" in n]
    assert '[projects."<dir>"] trust_level = "trusted" in $CODEX_HOME/config.toml' in note


@pytest.mark.parametrize(
    "args",
    [
        ("--surface", "claude-code", "--scope", "user", "--layout", "plugin"),
        ("--surface", "dsh", "--layout", "plugin"),
        ("--surface", "codex-app", "--scope", "galaxy"),
    ],
)
@pytest.mark.parametrize("operation", ["--install", "--check", "--uninstall"])
def test_unsupported_scope_layout_pairs_are_one_line(
    cli: Cli, tmp_path: Path, operation: str, args: tuple[str, ...]
) -> None:
    """Item 12: `--scope user --layout plugin` gave a traceback; any unsupported pair is exit 2, one line."""
    result = skills(cli, operation, *args, "--target", str(tmp_path / "t"))
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and result.stderr.startswith("loopx: ")
    assert not (tmp_path / "t").exists()


def test_a_facade_points_at_the_running_loopx_when_it_is_not_on_path(tmp_path: Path) -> None:
    """Item 12: with `loopx` off PATH the facade named a command that does not exist, without a warning."""
    env = {**os.environ, "PATH": "/usr/bin:/bin", "LOOPX_NOW": T0_ISO}
    target = tmp_path / "t"
    done = subprocess.run(
        [
            *(str(LOOPX_BIN), "workflow-skills", "--install", "--surface", "claude-code"),
            *("--target", str(target), "-f", "markdown"),
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "`loopx` is not on PATH" in done.stdout and str(LOOPX_BIN) not in done.stdout
    server = json.loads((target / ".mcp.json").read_text())["mcpServers"]["loopx"]
    assert server["command"] == str(LOOPX_BIN) and Path(server["command"]).is_file()
    on_path = {**env, "PATH": f"{LOOPX_BIN.parent}:/usr/bin:/bin"}
    check = subprocess.run(
        [str(LOOPX_BIN), "workflow-skills", "--check", "--surface", "claude-code", "--target", str(target)],
        capture_output=True,
        text=True,
        env=on_path,
        check=False,
    )
    assert check.returncode == 0, check.stdout  # the recorded command is reused, PATH or not
    fresh = subprocess.run(
        [str(LOOPX_BIN), "workflow-skills", "--install", "--surface", "dsh", "--target", str(tmp_path / "u")],
        capture_output=True,
        text=True,
        env=on_path,
        check=False,
    )
    assert fresh.returncode == 0 and "not on PATH" not in fresh.stdout
    assert 'LOOPX = "loopx"' in (tmp_path / "u/.dsh/plugins/loopx-dsh/lib/loopx.js").read_text()
