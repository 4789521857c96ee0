"""Class: the installer touches only its own base. A manifest arrives with a clone, a copy or a hand
edit; `.loopx` and `--target` can be symlinks: none of them may point a write or a delete elsewhere.

Each test names the observed case of issue 9 (items 3 and 4) it covers.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.builders import tree
from tests.conftest import Cli

MANIFEST = ".loopx/facades.json"


def skills(cli: Cli, *args: str) -> Any:
    """`loopx workflow-skills ARGS`."""
    result = cli("workflow-skills", *args)
    assert "Traceback" not in result.stdout + result.stderr
    return result


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the target with a file whose hash a hostile manifest can name."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "precious.md").write_text("Not LoopX's.\n")
    return folder


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_uninstall_in_a_copied_project_touches_only_the_copy(cli: Cli, tmp_path: Path) -> None:
    """Item 3: `cp -a proj proj-copy && cd proj-copy && loopx workflow-skills --uninstall --surface codex-app`."""
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "AGENTS.md").write_text("# Rules\n")
    os.chdir(proj)
    assert skills(cli, "--install", "--surface", "codex-app").exit_code == 0
    installed = tree(proj)
    shutil.copytree(proj, tmp_path / "proj-copy", symlinks=True)
    os.chdir(tmp_path / "proj-copy")
    result = skills(cli, "--uninstall", "--surface", "codex-app", "-f", "json")
    assert result.exit_code == 0, result.stderr
    assert tree(proj) == installed  # the original project is untouched
    assert tree(tmp_path / "proj-copy") == {"AGENTS.md": b"# Rules\n"}
    assert all(not f["path"].startswith("/") for f in result.json()["files"])


@pytest.mark.parametrize("operation", ["--install", "--uninstall", "--check"])
@pytest.mark.parametrize(
    "name",
    ["{outside}/precious.md", "../outside/precious.md", "a/../../outside/precious.md", "", "./x", "a//b"],
    ids=["absolute", "dotdot", "inner-dotdot", "empty", "dot", "empty-part"],
)
def test_hand_edited_manifest_cannot_reach_outside(
    cli: Cli, tmp_path: Path, outside: Path, operation: str, name: str
) -> None:
    """Item 3: a hand-edited manifest naming a file elsewhere (by its hash) is refused, exit 7, nothing written."""
    target = tmp_path / "proj"
    assert skills(cli, "--install", "--surface", "claude-code", "--target", str(target)).exit_code == 0
    manifest = json.loads((target / MANIFEST).read_text())
    manifest["files"].append(
        {
            "base": "target",
            "path": name.format(outside=outside),
            "owners": {"claude-code": {"merge": "owned", "sha256": _digest(outside / "precious.md")}},
            "written_sha256": _digest(outside / "precious.md"),
        }
    )
    (target / MANIFEST).write_text(json.dumps(manifest))
    before = tree(tmp_path)
    result = skills(cli, operation, "--surface", "claude-code", "--target", str(target), "--force")
    assert result.exit_code == 7, result.stdout + result.stderr
    assert result.stderr.count("\n") == 1 and str(tmp_path) not in result.stderr
    assert tree(tmp_path) == before


def test_hand_edited_manifest_cannot_go_through_a_symlink(cli: Cli, tmp_path: Path, outside: Path) -> None:
    """Item 3/4: a manifest path that runs through a symlink in the target is refused too."""
    target = tmp_path / "proj"
    assert skills(cli, "--install", "--surface", "dsh", "--target", str(target)).exit_code == 0
    (target / "link").symlink_to(outside, target_is_directory=True)
    manifest = json.loads((target / MANIFEST).read_text())
    manifest["files"][0]["path"] = "link/precious.md"
    (target / MANIFEST).write_text(json.dumps(manifest))
    before = tree(tmp_path)
    result = skills(cli, "--uninstall", "--surface", "dsh", "--target", str(target), "--force")
    assert result.exit_code == 7 and "symlink" in result.stderr
    assert tree(tmp_path) == before


def test_created_folders_from_the_manifest_are_confined(cli: Cli, tmp_path: Path, outside: Path) -> None:
    """Item 3: `created_dirs` that do not lead to the file are refused (uninstall would rmdir them)."""
    target = tmp_path / "proj"
    (outside / "empty").mkdir()
    assert skills(cli, "--install", "--surface", "dsh", "--target", str(target)).exit_code == 0
    manifest = json.loads((target / MANIFEST).read_text())
    manifest["files"][0]["created_dirs"] = ["../outside/empty"]
    (target / MANIFEST).write_text(json.dumps(manifest))
    result = skills(cli, "--uninstall", "--surface", "dsh", "--target", str(target))
    assert result.exit_code == 7 and (outside / "empty").is_dir()


def _as_schema_1(target: Path, root: Path) -> dict[str, Any]:
    """The manifest rewritten the way LoopX used to store it: absolute paths."""
    new = json.loads((target / MANIFEST).read_text())
    files = {
        str(root / f["path"]): {
            "owners": f["owners"],
            "written_sha256": f["written_sha256"],
            "original": f["original"],
            "created_dirs": [str(root / d) for d in f["created_dirs"]],
        }
        for f in new["files"]
    }
    ms = {h: i["pairs"][0]["installed_at_ms"] for h, i in new["installs"].items()}
    return {
        "schema_version": 1,
        "created_dirs": [str(root / ".loopx")],
        "installed_at_ms": ms,
        "files": files,
    }


def test_schema_1_manifest_inside_the_target_is_migrated(cli: Cli, tmp_path: Path) -> None:
    """Item 3: an old manifest whose absolute paths lie in the target still uninstalls, byte for byte."""
    target = tmp_path / "proj"
    target.mkdir()
    (target / "AGENTS.md").write_text("# Mine\n")
    before = tree(target)
    assert skills(cli, "--install", "--surface", "codex-app", "--target", str(target)).exit_code == 0
    (target / MANIFEST).write_text(json.dumps(_as_schema_1(target, target)))
    assert skills(cli, "--check", "--surface", "codex-app", "--target", str(target)).exit_code == 0
    assert skills(cli, "--uninstall", "--surface", "codex-app", "--target", str(target)).exit_code == 0
    assert tree(target) == before


def test_schema_1_manifest_of_another_folder_is_refused(cli: Cli, tmp_path: Path) -> None:
    """Item 3: the copied project's old manifest names the original's files: refused, exit 7, both intact."""
    proj = tmp_path / "proj"
    assert skills(cli, "--install", "--surface", "codex-app", "--target", str(proj)).exit_code == 0
    (proj / MANIFEST).write_text(json.dumps(_as_schema_1(proj, proj)))
    shutil.copytree(proj, tmp_path / "proj-copy", symlinks=True)
    before = tree(tmp_path)
    result = skills(cli, "--uninstall", "--surface", "codex-app", "--target", str(tmp_path / "proj-copy"))
    assert result.exit_code == 7 and "copied or moved" in result.stderr
    assert tree(tmp_path) == before


@pytest.mark.parametrize("version", [3, 99, "2", None, True, 1.5])
def test_unknown_schema_version_is_refused_unchanged(cli: Cli, tmp_path: Path, version: Any) -> None:
    """The manifest's schema version is checked: unknown, newer or missing is exit 8, bytes unchanged."""
    target = tmp_path / "proj"
    assert skills(cli, "--install", "--surface", "dsh", "--target", str(target)).exit_code == 0
    data = json.loads((target / MANIFEST).read_text())
    data["schema_version"] = version
    (target / MANIFEST).write_text(json.dumps(data))
    before = tree(tmp_path)
    for operation in ("--install", "--uninstall", "--check"):
        result = skills(cli, operation, "--surface", "dsh", "--target", str(target))
        assert result.exit_code == 8 and "left unchanged" in result.stderr, result.stderr
    assert tree(tmp_path) == before


def test_loopx_folder_linked_outside_is_refused(cli: Cli, tmp_path: Path, outside: Path) -> None:
    """Item 4: `.loopx` being a symlink to a folder outside the target is refused (exit 7), nothing written."""
    target = tmp_path / "proj"
    target.mkdir()
    (target / ".loopx").symlink_to(outside, target_is_directory=True)
    before = tree(tmp_path)
    for operation in ("--install", "--uninstall", "--check"):
        result = skills(cli, operation, "--surface", "claude-code", "--target", str(target))
        assert result.exit_code == 7 and "symlink .loopx" in result.stderr
    assert tree(tmp_path) == before


def test_manifest_file_linked_outside_is_refused(cli: Cli, tmp_path: Path, outside: Path) -> None:
    """Item 4: `.loopx/facades.json` itself being a symlink is refused as well."""
    target = tmp_path / "proj"
    (target / ".loopx").mkdir(parents=True)
    (target / MANIFEST).symlink_to(outside / "precious.md")
    result = skills(cli, "--install", "--surface", "claude-code", "--target", str(target))
    assert result.exit_code == 7 and (outside / "precious.md").read_text() == "Not LoopX's.\n"


def test_target_that_is_a_symlink_is_refused(cli: Cli, tmp_path: Path, outside: Path) -> None:
    """Item 4: `--target` itself being a symlink is refused (exit 7), nothing written through it."""
    link = tmp_path / "proj"
    link.symlink_to(outside, target_is_directory=True)
    before = tree(tmp_path)
    result = skills(cli, "--install", "--surface", "codex-app", "--target", str(link))
    assert result.exit_code == 7 and "--target" in result.stderr and str(tmp_path) not in result.stderr
    assert tree(tmp_path) == before


def test_backups_cannot_escape_through_a_symlink(cli: Cli, tmp_path: Path, outside: Path) -> None:
    """--force backs a file up under `.loopx/backups`: a symlink there is refused, not written through."""
    target = tmp_path / "proj"
    assert skills(cli, "--install", "--surface", "claude-code", "--target", str(target)).exit_code == 0
    skill = target / ".claude/skills/loopx/SKILL.md"
    skill.write_text("edited\n")
    (target / ".loopx/backups").symlink_to(outside, target_is_directory=True)
    result = skills(cli, "--install", "--surface", "claude-code", "--target", str(target), "--force")
    assert result.exit_code == 7 and sorted(p.name for p in outside.iterdir()) == ["precious.md"]
    assert skill.read_text() == "edited\n"
