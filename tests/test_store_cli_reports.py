"""`loopx store show` and `loopx store migrate`: their Markdown says what their JSON says, and
every misuse of `migrate`'s target and folder is one usage line (exit 2) with nothing moved.

The Markdown report is the one a person reads (`--format markdown`, or `human` on a
terminal); it must carry the same facts as the JSON a script reads: the store, its kind and
why it was chosen, the schema version of a database store, whether it is initialised, and the
note that files under `.loopx/` hold older state once the project moved to a database.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from loopx_core.errors import ExitCode
from tests.conftest import Cli, Project
from tests.pg import Cluster, cluster_fixture  # noqa: F401  (the session fixture pg_cluster)


def both(cli: Cli, *args: str) -> tuple[dict[str, Any], str]:
    """A command's JSON answer and its Markdown answer (both exit 0)."""
    as_json = cli(*args, "--format", "json")
    as_markdown = cli(*args, "--format", "markdown")
    assert as_json.exit_code == as_markdown.exit_code == 0, (as_json.stderr, as_markdown.stderr)
    return json.loads(as_json.stdout), as_markdown.stdout.rstrip("\n")


def files_of(root: Path) -> dict[str, bytes]:
    """Every file under `root/.loopx`, by relative path."""
    base = root / ".loopx"
    return {str(p.relative_to(base)): p.read_bytes() for p in sorted(base.rglob("*")) if p.is_file()}


def test_show_in_markdown_names_a_file_store_and_whether_it_is_initialised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli
) -> None:
    info, text = both(cli, "store", "show")
    assert info == {"store": "files", "kind": "files", "chosen_by": "default", "initialized": True}
    assert text == "Store: files (files, chosen by default)\nInitialised: yes"
    bare = Cli(tmp_path / "bare", monkeypatch)
    (tmp_path / "bare").mkdir()
    info, text = both(bare, "store", "show")
    assert info["initialized"] is False
    assert text == "Store: files (files, chosen by default)\nInitialised: no (run `loopx init`)"
    assert not (tmp_path / "bare" / ".loopx").exists()  # show only reads


def test_show_after_moving_to_postgresql_gives_the_schema_and_the_note(
    cli: Cli, project: Project, pg_cluster: Cluster
) -> None:
    dsn = pg_cluster.fresh_schema()
    assert cli("goal", "add", "-g", "g1", "-o", "Ship it").exit_code == 0
    moved = cli("store", "migrate", "--to", dsn, "--format", "json")
    assert moved.exit_code == 0, moved.stderr
    info, text = both(cli, "store", "show")
    assert info["kind"] == "postgresql" and info["initialized"] is True
    assert info["schema_version"] == info["schema_supported"]
    assert info["note"] == "files under .loopx/ hold older state that is not in use"
    assert text.splitlines() == [
        f"Store: {info['store']} ({info['kind']}, chosen by {info['chosen_by']})",
        f"Schema version: {info['schema_version']} (this loopx: {info['schema_supported']})",
        "Initialised: yes",
        "Note: files under .loopx/ hold older state that is not in use",
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--to", "files"], "--to files needs the project folder to write into, e.g. `--to files .`"),
        (["--to", "files", "a-file"], "--to files needs a folder"),
        (["--to", "postgresql://db.example/loopx", "elsewhere"], "a folder goes with `--to files` only"),
        (["--to", "files", "."], "the project already keeps its state in files here"),
    ],
)
def test_a_misused_target_is_one_usage_line_and_nothing_moves(
    cli: Cli, project: Project, monkeypatch: pytest.MonkeyPatch, args: list[str], message: str
) -> None:
    assert cli("goal", "add", "-g", "g1", "-o", "Ship it").exit_code == 0
    (project.root / "a-file").write_text("not a folder")
    monkeypatch.chdir(project.root)
    before = files_of(project.root)
    listing = sorted(p.name for p in project.root.iterdir())
    result = cli("store", "migrate", *args)
    assert result.exit_code == ExitCode.USAGE
    assert result.stderr == f"loopx: error: {message}\n"
    assert json.loads(result.stdout) == {"error": {"code": "usage", "message": message, "exit_code": 2}}
    assert files_of(project.root) == before
    assert sorted(p.name for p in project.root.iterdir()) == listing


def test_migrate_in_markdown_reports_the_copy_then_that_it_is_already_there(
    cli: Cli, project: Project, tmp_path: Path
) -> None:
    assert cli("goal", "add", "-g", "g1", "-o", "Ship it").exit_code == 0
    copy = tmp_path / "copy"
    first = cli("store", "migrate", "--to", "files", str(copy), "--format", "markdown")
    assert first.exit_code == 0, first.stderr
    again, text = both(cli, "store", "migrate", "--to", "files", str(copy))
    assert again["copied"] is False and again["project_uses"] == "files"
    counts = ", ".join(f"{n} {kind}" for kind, n in again["counts"].items())
    assert first.stdout.rstrip("\n") == (
        f"Copied files -> files ({counts}); verified {again['checksum'][:19]}...\nThe project uses files."
    )
    assert (
        text
        == f"Already there: files -> files ({counts}); verified {again['checksum'][:19]}...\nThe project uses files."
    )
    assert again["counts"]["goals"] == 1
    assert str(tmp_path) not in first.stdout + text
    assert files_of(copy)["registry.json"] == files_of(project.root)["registry.json"]
