"""Every generated file of every host, scope and layout, pinned by a snapshot (plus the file list).

Changing a template without `pytest --snapshot-update` fails here.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import LOOPX_BIN, Cli
from tests.snapshot_ext import text_extension

CASES = [
    ("claude-code", "project", "default"),
    ("claude-code", "project", "plugin"),
    ("claude-code", "user", "default"),
    ("codex-app", "project", "default"),
    ("codex-app", "user", "default"),
    ("dsh", "project", "default"),
    ("dsh", "user", "default"),
]


@pytest.mark.parametrize(("surface", "scope", "layout"), CASES, ids=["-".join(c) for c in CASES])
def test_generated_files(  # type: ignore[no-untyped-def]
    cli: Cli, tmp_path: Path, surface: str, scope: str, layout: str, snapshot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(
        "PATH", f"{LOOPX_BIN.parent}:{os.environ['PATH']}"
    )  # `loopx` on PATH: files say `loopx`
    target = tmp_path / "target"
    for args in (("goal", "add", "-g", "demo", "-o", "Ship"), ("agent", "register", "-a", "builder")):
        assert cli(*args).exit_code == 0
    result = cli(
        "workflow-skills",
        "--install",
        "--surface",
        surface,
        "--scope",
        scope,
        "--layout",
        layout,
        "--target",
        str(target),
        "-g",
        "demo",
        "-a",
        "builder",
    )
    assert result.exit_code == 0, result.stderr
    files = sorted(
        str(p.relative_to(target)) for p in target.rglob("*") if p.is_file() and ".loopx" not in p.parts
    )
    assert "\n".join(files) + "\n" == snapshot(name="file-list", extension_class=text_extension("files.txt"))
    for rel in files:
        text = (target / rel).read_text().replace(str(tmp_path), "<TMP>")
        assert text == snapshot(name=rel.replace("/", "__"), extension_class=text_extension(rel)), rel


def test_host_templates_extend_the_shared_parts_instead_of_copying_them() -> None:
    """A host template repeats at most a line or two of a shared one (the provenance comment)."""
    from tests.conftest import REPO

    root = REPO / "templates/loopx_templates"
    shared = {line.strip() for p in (root / "shared").rglob("*.j2") for line in p.read_text().splitlines()}
    shared = {line for line in shared if len(line) >= 30}
    copied = {
        str(p.relative_to(root)): [line for line in p.read_text().splitlines() if line.strip() in shared]
        for p in root.rglob("*.j2")
        if "shared" not in p.parts and "scaffold" not in p.parts
    }
    assert copied and all(len(lines) <= 1 for lines in copied.values()), {
        k: v for k, v in copied.items() if v
    }
    extends = (root / "claude-code/SKILL.md.j2").read_text()
    assert '{% extends "shared/agents-skill/SKILL.md.j2" %}' in extends
