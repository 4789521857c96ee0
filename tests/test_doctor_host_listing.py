"""`loopx doctor`'s `host_unlisted`: the real host CLIs are asked whether they still list LoopX."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from loopx_core.store.files import FileStore
from tests import hostclis
from tests.builders import facade_subjects
from tests.conftest import LOOPX_BIN


def _loopx(project: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = hostclis.env(home)
    env["PATH"] = f"{LOOPX_BIN.parent}:{env['PATH']}"
    env.pop("LOOPX_ROOT", None)
    return subprocess.run(
        [str(LOOPX_BIN), "--root", str(project), *args],
        env=env,
        cwd=project,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=180,
        check=False,
    )


def _project(tmp_path: Path) -> tuple[Path, Path]:
    project, home = tmp_path / "proj", tmp_path / "home"
    project.mkdir()
    assert _loopx(project, home, "init").returncode == 0
    facade_subjects(FileStore(project))
    return project, home


def _findings(project: Path, home: Path) -> list[dict[str, object]]:
    proc = _loopx(project, home, "doctor", "--check", "installation", "-f", "json")
    assert proc.returncode in (0, 9), proc.stderr
    assert "Traceback" not in proc.stderr
    return [f for f in json.loads(proc.stdout)["findings"] if f["code"] == "host_unlisted"]


def _install(project: Path, home: Path, surface: str, *extra: str) -> None:
    proc = _loopx(project, home, "workflow-skills", "--install", "--surface", surface, *extra)
    assert proc.returncode == 0, proc.stderr


def test_codex_that_dropped_the_server_is_a_finding(tmp_path: Path) -> None:
    codex = hostclis.require("codex")
    project, home = _project(tmp_path)
    _install(project, home, "codex-app", "--scope", "user", "-g", "demo", "-a", "builder")
    assert _findings(project, home) == []  # `codex mcp get loopx --json` finds it
    removed = hostclis.run([str(codex), "mcp", "remove", "loopx"], home)
    assert removed.returncode == 0, removed.stderr
    [finding] = _findings(project, home)
    assert "codex mcp get loopx --json" in str(finding["message"])
    assert finding["hint"] == "loopx workflow-skills --install --surface codex-app --scope user"
    assert str(tmp_path) not in json.dumps(finding)


def test_claude_that_dropped_the_server_is_a_finding(tmp_path: Path) -> None:
    claude = hostclis.require("claude")
    project, home = _project(tmp_path)
    _install(project, home, "claude-code")  # project scope: .mcp.json, listed as pending approval
    assert _findings(project, home) == []
    removed = hostclis.run([str(claude), "mcp", "remove", "loopx", "--scope", "project"], home, cwd=project)
    assert removed.returncode == 0, removed.stdout + removed.stderr
    [finding] = _findings(project, home)
    assert "claude mcp list" in str(finding["message"])


def test_a_dsh_package_never_linked_is_a_finding(tmp_path: Path) -> None:
    hostclis.require("dsh")
    project, home = _project(tmp_path)
    _install(project, home, "dsh", "-g", "demo", "-a", "builder")
    [finding] = _findings(project, home)
    assert finding["hint"] == 'dsh plugin --profile web add -w "link:.dsh/plugins/loopx-dsh"'


def test_without_the_host_cli_on_path_nothing_is_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from loopx_core.doctor.installation import listing_problem
    from loopx_core.hosts.manager import get_plugin_manager

    pm = get_plugin_manager()
    monkeypatch.setenv("PATH", str(tmp_path))
    assert listing_problem(pm, "codex-app", "user", "default", tmp_path) is None
    fake = tmp_path / "codex"  # a codex that answers, but lists nothing
    fake.write_text("#!/bin/sh\necho '{}'\n")
    fake.chmod(0o755)
    message, _hint = listing_problem(pm, "codex-app", "user", "default", tmp_path) or ("", "")
    assert message.startswith("`codex mcp get loopx --json` does not list LoopX"), message
    assert listing_problem(pm, "codex-app", "project", "default", tmp_path) is None  # codex cannot say
