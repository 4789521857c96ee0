"""Class: uninstalling a host whose plugin is gone (pip-uninstalled, or blocked by LOOPX_PLUGINS).

Its files come out from what the install recorded; where only the plugin could say where a
folder is (a user-scope home like `$CODEX_HOME`), one usage error names every file and what to
take out of it by hand, and nothing is written. A surface nothing recorded stays unknown.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loopx_core.errors import UsageError
from loopx_core.hosts.manager import get_plugin_manager
from loopx_installer.service import Request, run

USER_AGENTS = "# Mine\n"


def _install(surface: str, **kw: object) -> None:
    report = run(Request("install", surface, loopx_command="loopx", **kw), get_plugin_manager())  # type: ignore[arg-type]
    assert report.written and not report.conflicts


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("surface", ["codex-app", "claude-code", "dsh"])
def test_project_files_come_out_without_the_plugin(
    surface: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Project scope: every file is under the project, so uninstall needs only the manifest; the
    user's own text (written before and between installs) stays, LoopX's parts go."""
    proj = tmp_path / "proj"
    (proj / ".loopx").mkdir(parents=True)
    (proj / "AGENTS.md").write_text(USER_AGENTS)
    (proj / ".mcp.json").write_text(json.dumps({"mine": 1}, indent=2) + "\n")
    _install(surface, target=proj)
    with (proj / "AGENTS.md").open("a") as f:
        f.write("# More\n")
    monkeypatch.setenv("LOOPX_PLUGINS", f"-{surface}")
    report = run(Request("uninstall", surface, target=proj), get_plugin_manager())
    assert report.written and not report.conflicts
    assert any("plugin is not installed" in n for n in report.notices)
    want = {"AGENTS.md": (USER_AGENTS + "# More\n").encode()}
    want[".mcp.json"] = (json.dumps({"mine": 1}, indent=2) + "\n").encode()
    assert _tree(proj) == want  # the manifest went with the last record


def test_dry_run_without_the_plugin_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--dry-run of such an uninstall plans and writes nothing."""
    proj = tmp_path / "proj"
    (proj / ".loopx").mkdir(parents=True)
    _install("codex-app", target=proj)
    before = _tree(proj)
    monkeypatch.setenv("LOOPX_PLUGINS", "-codex-app")
    report = run(Request("uninstall", "codex-app", target=proj, dry_run=True), get_plugin_manager())
    assert not report.written and report.diffs and _tree(proj) == before


def test_user_scope_names_each_file_to_remove_by_hand(
    monkeypatch: pytest.MonkeyPatch, isolated_home: Path
) -> None:
    """User scope: `$CODEX_HOME` is the plugin's to declare; the error lists the files, writes nothing."""
    _install("codex-app", scope="user")
    before = _tree(isolated_home)
    monkeypatch.setenv("LOOPX_PLUGINS", "-codex-app")
    with pytest.raises(UsageError) as caught:
        run(Request("uninstall", "codex-app", scope="user"), get_plugin_manager())
    message = caught.value.message
    assert "<codex_home>/config.toml (take out LoopX's mcp_servers.loopx)" in message
    assert str(isolated_home) not in message
    assert _tree(isolated_home) == before


@pytest.mark.parametrize("operation", ["uninstall", "install", "check"])
def test_a_surface_nothing_recorded_stays_unknown(operation: str, tmp_path: Path) -> None:
    """Only a recorded uninstall works without its plugin; anything else is `unknown surface`."""
    with pytest.raises(UsageError, match="unknown surface"):
        run(Request(operation, "no-such-host", target=tmp_path), get_plugin_manager())  # type: ignore[arg-type]


@pytest.mark.parametrize("surface", ["codex-app", "dsh", "claude-code"])
def test_the_command_line_uninstalls_a_host_whose_plugin_is_gone(tmp_path: Path, surface: str) -> None:
    """`loopx workflow-skills -s HOST --uninstall` with HOST's plugin blocked: its files come out
    (the command line no longer refuses the name before the installer reads its record)."""
    from tests.conftest import run_loopx

    root = tmp_path / "project"
    (root / ".loopx").mkdir(parents=True)
    before = {p for p in root.rglob("*")}
    assert run_loopx("workflow-skills", "-s", surface, "--install", root=root, cwd=root).exit_code == 0
    gone = {"LOOPX_PLUGINS": f"-{surface}"}
    done = run_loopx(
        "workflow-skills", "-s", surface, "--uninstall", "-f", "json", root=root, cwd=root, env=gone
    )
    assert done.exit_code == 0, done.stderr
    assert json.loads(done.stdout)["host"] == surface
    left = {p for p in root.rglob("*") if ".loopx" not in p.relative_to(root).parts[:1]}
    assert left <= before, sorted(str(p) for p in left - before)
    typo = run_loopx("workflow-skills", "-s", surface + "x", "--uninstall", root=root, cwd=root, env=gone)
    assert typo.exit_code == 2 and "unknown surface" in typo.stderr
