"""Class: a project-scope facade goes into the project, wherever `workflow-skills` is run from.

Observed: `cd project/src && loopx workflow-skills --install --surface codex-app` wrote the
facade into `src/` (where no host opened at the project reads it) and its manifest into a new
`src/.loopx/`, which from then on hid the project from every command run in `src/`:
`loopx status` answered "no LoopX state here (no .loopx/ in this folder or any folder above
it)", exit 3. `loopx --root P workflow-skills --install` from elsewhere wrote into the
folder it ran in, not P.

Now at project scope (no `--target`) the facade's folder is the project root: `--root`,
`LOOPX_ROOT`, else the nearest folder up holding `.loopx/`; a folder outside any project
(before `loopx init`) is still its own target. Each host, run from a subfolder (one to three
deep), from outside with `--root`, and with `LOOPX_ROOT`: installed, checked and uninstalled
in the project, no `.loopx/` anywhere else, and commands below it still find the project.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.builders import demo_project
from tests.conftest import LOOPX_BIN, T0_ISO

SURFACES = ["claude-code", "codex-app", "dsh"]
WHERE = ["subfolder", "deep subfolder", "outside with --root", "outside with LOOPX_ROOT"]


def _loopx(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "LOOPX_NOW": T0_ISO, **(env or {})}
    return subprocess.run(
        [str(LOOPX_BIN), *args], capture_output=True, text=True, cwd=cwd, env=full, timeout=60, check=False
    )


def _state_dirs(top: Path) -> list[str]:
    return sorted(str(p.relative_to(top)) for p in top.rglob(".loopx") if p.is_dir())


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("surface", SURFACES)
def test_the_facade_lands_in_the_project(tmp_path: Path, surface: str, where: str) -> None:
    root = demo_project(tmp_path / "project")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    deep = root / "src" / "pkg" / "mod"
    deep.mkdir(parents=True)
    cwd, args, env = {
        "subfolder": (root / "src", [], None),
        "deep subfolder": (deep, [], None),
        "outside with --root": (outside, ["--root", str(root)], None),
        "outside with LOOPX_ROOT": (outside, [], {"LOOPX_ROOT": str(root)}),
    }[where]
    ids = ["-g", "demo", "-a", "builder", "--loopx-command", "loopx", "-f", "json"]
    skills = [*args, "workflow-skills", "--surface", surface, *ids]

    installed = _loopx(*skills, "--install", cwd=cwd, env=env)
    assert installed.returncode == 0, installed.stderr
    files = [f["path"] for f in json.loads(installed.stdout)["files"]]
    assert files and all((root / f).is_file() for f in files), files
    assert _state_dirs(tmp_path) == ["project/.loopx"]
    assert not any(p.is_file() for p in outside.rglob("*")) and not any(
        p.is_file() for p in (root / "src").rglob("*")
    )

    status = _loopx(*args, "status", "-f", "json", cwd=deep, env=env)
    assert status.returncode == 0 and json.loads(status.stdout)["goals"][0]["goal_id"] == "demo", (
        status.stderr
    )
    checked = _loopx(*skills, "--check", cwd=deep if not args and not env else outside, env=env)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    removed = _loopx(*skills, "--uninstall", cwd=cwd, env=env)
    assert removed.returncode == 0, removed.stderr
    assert not any((root / f).exists() for f in files if not f.startswith(".loopx/"))


def test_outside_any_project_the_folder_is_its_own_target(tmp_path: Path) -> None:
    lone = tmp_path / "lone"
    lone.mkdir()
    done = _loopx(
        "workflow-skills", "--install", "--surface", "codex-app", "--loopx-command", "loopx", cwd=lone
    )
    assert done.returncode == 0, done.stderr
    assert (lone / "AGENTS.md").is_file() and _state_dirs(tmp_path) == ["lone/.loopx"]
