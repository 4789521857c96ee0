"""The wheel alone is enough: built, installed in a fresh venv, every facade installs from there."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.slow


def sh(*args: str | Path, cwd: Path | None = None) -> str:
    proc = subprocess.run(
        [str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=600, check=False
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


def test_wheel_installs_every_host_facade(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    sh(sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", dist, REPO)
    wheel = next(dist.glob("loopx_kit-*.whl"))
    names = sh(sys.executable, "-m", "zipfile", "-l", wheel)
    for part in (
        "loopx_core/cli/app.py",
        "loopx_installer/service.py",
        "loopx_codex_app/plugin.py",
        "loopx_templates/shared/agents-skill/SKILL.md.j2",
        "entry_points.txt",
    ):
        assert part in names, part
    venv = tmp_path / "venv"
    sh(sys.executable, "-m", "venv", venv)
    sh(venv / "bin/python", "-m", "pip", "install", "--quiet", wheel)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    loopx = venv / "bin/loopx"
    listed = json.loads(sh(loopx, "hosts", "list", "-f", "json", cwd=outside))
    assert [h["name"] for h in listed["hosts"]] == ["claude-code", "codex-app", "dsh"]
    where = sh(
        venv / "bin/python",
        "-c",
        "import loopx_templates, loopx_core; print(loopx_templates.__file__); print(loopx_core.__file__)",
        cwd=outside,
    )
    assert all(str(venv) in line for line in where.split()), where
    for surface, extra in (
        ("claude-code", []),
        ("claude-code", ["--layout", "plugin"]),
        ("codex-app", []),
        ("dsh", []),
    ):
        target = tmp_path / f"t-{surface}-{len(extra)}"
        report = json.loads(
            sh(
                loopx,
                "workflow-skills",
                "--install",
                "--surface",
                surface,
                "--target",
                target,
                "-f",
                "json",
                *extra,
                cwd=outside,
            )
        )
        assert report["files"] and all(f["status"] == "create" for f in report["files"]), report
        assert sh(
            loopx, "workflow-skills", "--check", "--surface", surface, "--target", target, *extra, cwd=outside
        )
