"""The real hosts accept what we install (pinned CLIs from npm; missing CLIs fail, never skip)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from loopx_core.store.files import FileStore
from tests import hostclis
from tests.builders import facade_subjects
from tests.conftest import LOOPX_BIN, Cli, Project
from tests.hostfiles import USER_TOML


@pytest.fixture(autouse=True)
def _facade_subjects(project: Project) -> None:
    """The goals and agents these installs drive exist (an install refuses ones that do not)."""
    facade_subjects(project.store)


def install(cli: Cli, surface: str, target: Path | None, *extra: str) -> None:
    args = ["workflow-skills", "--install", "--surface", surface, *extra]
    if target is not None:
        args += ["--target", str(target)]
    result = cli(*args)
    assert result.exit_code == 0, result.stderr


def test_claude_validates_the_plugin_bundle_and_marketplace(cli: Cli, tmp_path: Path) -> None:
    claude = hostclis.require("claude")
    bundle = tmp_path / "bundle"
    install(cli, "claude-code", bundle, "--layout", "plugin")
    for folder in (bundle, bundle / "plugins" / "loopx"):
        result = hostclis.run([str(claude), "plugin", "validate", "--strict", str(folder)], tmp_path / "home")
        assert result.returncode == 0, result.stdout + result.stderr
        assert "Validation passed" in result.stdout


def test_claude_lists_our_project_mcp_server(cli: Cli, tmp_path: Path) -> None:
    claude = hostclis.require("claude")
    project = tmp_path / "proj"
    project.mkdir()
    (project / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"other": {"command": "other-mcp", "args": []}}})
    )
    install(cli, "claude-code", project)
    result = hostclis.run([str(claude), "mcp", "list"], tmp_path / "home", cwd=project)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    ours = [line for line in lines if line.startswith("loopx:")]
    assert ours and "loopx mcp serve" in ours[0], result.stdout
    assert any(line.startswith("other:") for line in lines)


def test_codex_reads_our_user_config(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    codex = hostclis.require("codex")
    home = tmp_path / "home"
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True)
    (codex_home / "config.toml").write_text(USER_TOML)
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    monkeypatch.setenv("PATH", f"{LOOPX_BIN.parent}:{os.environ['PATH']}")  # `loopx` on PATH: named as such
    install(cli, "codex-app", None, "--scope", "user", "-g", "demo", "-a", "builder")
    got = hostclis.run([str(codex), "mcp", "get", "loopx", "--json"], home)
    assert got.returncode == 0, got.stderr
    server = json.loads(got.stdout)
    assert server["transport"]["command"] == "loopx" and server["transport"]["args"] == ["mcp", "serve"]
    listed = hostclis.run([str(codex), "mcp", "list", "--json"], home)
    assert [s["name"] for s in json.loads(listed.stdout)] == ["github", "loopx"]
    assert (codex_home / "automations/loopx-demo-builder/automation.toml").is_file()


def test_dsh_loads_the_plugin_package(cli: Cli, tmp_path: Path) -> None:
    dsh = hostclis.require("dsh")
    hostclis.require("pnpm")
    project = tmp_path / "proj"
    install(cli, "dsh", project, "-g", "demo", "-a", "builder")
    package = project / ".dsh/plugins/loopx-dsh"
    home = tmp_path / "home"
    added = hostclis.run(
        [str(dsh), "plugin", "--profile", "web", "add", "-w", f"link:{package}"], home, timeout=300
    )
    assert added.returncode == 0, added.stdout + added.stderr
    dumped = hostclis.run([str(dsh), "--profile", "web", "--dump-config"], home)
    assert dumped.returncode == 0, dumped.stderr
    section = dumped.stdout.split("# == loopx-dsh", 1)
    assert len(section) == 2, dumped.stdout[-2000:]
    assert "loopx-dsh/" in section[1]


def test_claude_health_check_connects_to_our_server(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """User scope needs no interactive approval: `claude mcp list` really starts `loopx mcp serve`."""
    claude = hostclis.require("claude")
    home = tmp_path / "home"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    install(cli, "claude-code", None, "--scope", "user", "--loopx-command", str(LOOPX_BIN))
    project = tmp_path / "proj"
    project.mkdir()
    FileStore(project).init()
    result = hostclis.run([str(claude), "mcp", "list"], home, cwd=project)
    line = next((x for x in result.stdout.splitlines() if x.startswith("loopx:")), "")
    assert "Connected" in line, result.stdout + result.stderr


def test_codex_lists_the_server_entry(cli: Cli, tmp_path: Path) -> None:
    codex = hostclis.require("codex")
    home = tmp_path / "home"
    project = tmp_path / "proj"
    install(cli, "codex-app", project)
    trusted = f'[projects."{project}"]\ntrust_level = "trusted"\n'
    (home / ".codex").mkdir(parents=True)
    (home / ".codex/config.toml").write_text(trusted)
    listed = hostclis.run([str(codex), "mcp", "list", "--json"], home, cwd=project)
    assert listed.returncode == 0, listed.stderr
    servers = {s["name"]: s for s in json.loads(listed.stdout)}
    assert servers["loopx"]["transport"]["args"] == ["mcp", "serve"]


def test_codex_reads_a_merged_inline_mcp_servers_table(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An inline `mcp_servers = {...}` table takes LoopX's server and stays valid for Codex's own parser."""
    codex = hostclis.require("codex")
    home = tmp_path / "home"
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True)
    (codex_home / "config.toml").write_text('mcp_servers = { other = { command = "x" } }\n')
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    install(cli, "codex-app", None, "--scope", "user", "--loopx-command", "loopx")
    listed = hostclis.run([str(codex), "mcp", "list", "--json"], home)
    assert listed.returncode == 0, listed.stderr
    assert sorted(s["name"] for s in json.loads(listed.stdout)) == ["loopx", "other"]
    gone = cli("workflow-skills", "--uninstall", "--surface", "codex-app", "--scope", "user")
    assert gone.exit_code == 0
    listed = hostclis.run([str(codex), "mcp", "list", "--json"], home)
    assert [s["name"] for s in json.loads(listed.stdout)] == ["other"]
