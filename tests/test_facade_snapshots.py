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
