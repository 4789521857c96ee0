"""`loopx hosts scaffold`: what it writes, what it refuses, and that the result works as generated.

The slow test is the whole story: scaffold a plugin for a new host, pip-install it into a fresh
virtual environment beside LoopX (installed from a wheel of this repository), run the plugin's
own generated tests there, see it in `loopx hosts list`, install its facade.
"""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

import pytest

from loopx_core.conformance import HostConformance, checks
from loopx_core.conformance.sandbox import Sandbox, cases_for
from loopx_core.hosts.manager import get_plugin_manager
from tests.conftest import Cli
from tests.wheels import clean_env, sh

GENERATED = [
    "README.md",
    "pyproject.toml",
    "src/loopx_host_{m}/__init__.py",
    "src/loopx_host_{m}/plugin.py",
    "src/loopx_host_{m}/templates/SKILL.md.j2",
    "src/loopx_host_{m}/templates/config.json.j2",
    "tests/conftest.py",
    "tests/test_conformance.py",
    "tests/test_facade.py",
]


def test_scaffold_writes_a_distribution(cli: Cli, tmp_path: Path) -> None:
    result = cli("hosts", "scaffold", "acme-ide", "--dir", str(tmp_path), "--title", "Acme IDE", "-f", "json")
    assert result.exit_code == 0, result.stderr
    data = result.json()
    folder = tmp_path / "loopx-host-acme-ide"
    assert data["folder"] == str(folder) and data["module"] == "loopx_host_acme_ide"  # type: ignore[index]
    assert data["files"] == [f.format(m="acme_ide") for f in GENERATED]  # type: ignore[index]
    assert any("pytest --snapshot-update" in step for step in data["next_steps"])  # type: ignore[index]
    project = tomllib.loads((folder / "pyproject.toml").read_text())
    assert project["project"]["entry-points"]["loopx"] == {"acme-ide": "loopx_host_acme_ide.plugin"}
    assert project["project"]["dependencies"][0].startswith("loopx-kit>=")
    assert (
        (folder / "tests/conftest.py").read_text().endswith('pytest_plugins = ["loopx_core.pytest_plugin"]\n')
    )
    for source in folder.rglob("*.py"):
        compile(source.read_text(), str(source), "exec")
    ruff = Path(sys.executable).parent / "ruff"
    sh(ruff, "check", "--no-cache", "--select", "E,F,W,I,UP,B,SIM,RUF", "--ignore", "E501", folder)
    sh(ruff, "format", "--check", "--no-cache", folder)
    human = cli("hosts", "scaffold", "beta", "--dir", str(tmp_path), "-f", "markdown")
    assert (
        "Wrote" in human.stdout and "Next steps:" in human.stdout and (tmp_path / "loopx-host-beta").is_dir()
    )


def test_scaffold_refuses(cli: Cli, tmp_path: Path) -> None:
    where = tmp_path / "plugins"
    where.mkdir()
    for bad in ("Acme", "acme_ide", "-acme", "acme--ide", "9acme", ""):
        result = cli("hosts", "scaffold", bad, "--dir", str(where))
        assert result.exit_code == 2, bad
    taken = cli("hosts", "scaffold", "dsh", "--dir", str(where))
    assert taken.exit_code == 2 and "already exists" in taken.stderr
    assert list(where.iterdir()) == []
    (where / "loopx-host-acme").mkdir()  # an empty folder is fine
    assert cli("hosts", "scaffold", "acme", "--dir", str(where)).exit_code == 0
    again = cli("hosts", "scaffold", "acme", "--dir", str(where))
    assert again.exit_code == 7 and "not empty" in again.stderr


def test_generated_plugin_passes_the_kit_in_process(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fast version of the slow test: the generated module, registered in-process, passes every check."""
    assert cli("hosts", "scaffold", "quick-host", "--dir", str(tmp_path)).exit_code == 0
    monkeypatch.syspath_prepend(str(tmp_path / "loopx-host-quick-host/src"))
    import importlib

    plugin = importlib.import_module("loopx_host_quick_host.plugin")
    pm = get_plugin_manager(load_entrypoints=False, plugins=[("quick-host", plugin)])
    sb = Sandbox(tmp_path / "sandbox", pm, "quick-host", monkeypatch)
    cases = cases_for(sb.surface)
    assert [c.id for c in cases] == ["project-default", "user-default"]
    checks.check_surface(sb)
    checks.check_renders_strictly(sb, cases)
    checks.check_paths_inside(sb, cases)
    checks.check_provenance(sb, cases)
    checks.check_round_trip(sb, cases, foreign=False)
    checks.check_round_trip(sb, cases, foreign=True)
    checks.check_uninstall_keeps_user_edits(sb, cases)
    checks.check_reinstall_is_a_no_op(sb, cases)
    checks.check_clean_after_install(sb, cases)
    checks.check_owned_files_parse(sb, cases)
    checks.check_packet_hints(sb)


@pytest.mark.slow
def test_scaffolded_plugin_works_in_a_fresh_venv(tmp_path: Path, loopx_wheel: Path) -> None:
    venv = tmp_path / "venv"
    sh(sys.executable, "-m", "venv", venv)
    env = clean_env(tmp_path, venv / "bin")
    python, loopx = venv / "bin/python", venv / "bin/loopx"
    sh(python, "-m", "pip", "install", "--quiet", loopx_wheel, "pytest", "syrupy", env=env)
    work = tmp_path / "work"
    work.mkdir()
    sh(loopx, "hosts", "scaffold", "acme-ide", "--dir", work, env=env, cwd=work)
    plugin = work / "loopx-host-acme-ide"
    sh(python, "-m", "pip", "install", "--quiet", plugin, env=env, cwd=work)  # not editable: from its wheel

    listed = json.loads(sh(loopx, "hosts", "list", "-f", "json", env=env, cwd=work))["hosts"]
    ours = [h for h in listed if h["name"] == "acme-ide"]
    assert ours and ours[0]["distribution"] == "loopx-host-acme-ide", listed
    assert {h["name"] for h in listed} == {"acme-ide", "claude-code", "codex-app", "dsh"}

    pytest_args = (python, "-m", "pytest", "-q", "-p", "no:cacheprovider")
    recorded = sh(*pytest_args, "--snapshot-update", env=env, cwd=plugin)
    assert "2 snapshots generated" in recorded, recorded
    passed = sh(*pytest_args, env=env, cwd=plugin)
    expected = len([n for n in dir(HostConformance) if n.startswith("test_")]) + 2  # + the two snapshots
    assert f"{expected} passed" in passed and "failed" not in passed, passed
    assert (plugin / "tests/__snapshots__/test_facade.ambr").is_file()

    target = tmp_path / "target"
    for args in (
        ("init",),
        ("goal", "add", "-g", "demo", "-o", "Ship"),
        ("agent", "register", "-a", "builder"),
    ):
        sh(loopx, *args, env=env, cwd=work)  # the goal and agent the facade drives
    skills = (loopx, "workflow-skills", "--surface", "acme-ide", "--target", target, "-f", "json")
    report = json.loads(sh(*skills, "--install", "-g", "demo", "-a", "builder", env=env, cwd=work))
    assert {f["path"]: f["status"] for f in report["files"]} == {
        ".acme-ide/skills/loopx/SKILL.md": "create",
        ".acme-ide/config.json": "create",
    }
    assert "Generated by LoopX" in (target / ".acme-ide/skills/loopx/SKILL.md").read_text()
    assert json.loads(sh(*skills, "--check", "-g", "demo", "-a", "builder", env=env, cwd=work))["clean"]
    sh(*skills, "--uninstall", env=env, cwd=work)
    assert list(target.rglob("*")) == []
