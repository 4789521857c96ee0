"""A wheel of this repository and a new user's environment, for tests that install LoopX as users do."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from loopx_core.store.lock import file_lock
from tests.conftest import REPO


def sh(*args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    """Run a command; fail the test with its output unless it exits 0."""
    proc = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900, check=False
    )
    assert proc.returncode == 0, f"{args}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc.stdout


def shared_tmp(factory: pytest.TempPathFactory) -> Path:
    """A temp folder every xdist worker of this run shares (the run's own folder otherwise)."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def loopx_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel of this repository (LoopX as `pip install loopx-kit` would bring it), built once per run."""
    dist = shared_tmp(tmp_path_factory) / "loopx-wheel"
    with file_lock(dist.parent / "loopx-wheel.lock", timeout=600):
        if not list(dist.glob("loopx_kit-*.whl")):
            sh(sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", dist, REPO)
    return next(dist.glob("loopx_kit-*.whl"))


def clean_env(root: Path, *path: Path) -> dict[str, str]:
    """An environment like a new user's: homes inside `root`, PATH of `path` plus the system's,
    no trace of this test run (no virtualenv, PYTEST_*, LOOPX_*); pip's settings and a shared cache kept."""
    home = root / "home"
    kept = {k: v for k, v in os.environ.items() if k.startswith("PIP_") or k in ("LANG", "LC_ALL", "TMPDIR")}
    return {
        **kept,
        "HOME": str(home),
        "CODEX_HOME": str(home / ".codex"),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "DSH_HOME": str(home / ".dsh"),
        "DSH_AGENTS_HOME": str(home / ".dsh"),
        "PATH": os.pathsep.join([*(str(p) for p in path), "/usr/local/bin", "/usr/bin", "/bin"]),
        "PIP_CACHE_DIR": str(root.parent / "pip-cache"),
    }
