"""Class: every way a file store comes to exist writes `.loopx/.gitignore`, and keeps one there.

`loopx init` wrote it from the CLI only, so a store created another way (the library's
`FileStore.init`, a migration into a folder) had none and a round trip files -> PostgreSQL ->
files lost it. Now the store writes it whenever it creates itself; a `.gitignore` already
there is the project's own and is never changed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from loopx_core.store import migrate
from loopx_core.store.files import GITIGNORE, FileStore
from tests.builders import build_project
from tests.conftest import run_loopx


def by_init(root: Path) -> None:
    """`FileStore.init`, as a library caller (or a test builder) creates a store."""
    FileStore(root).init()


def by_cli(root: Path) -> None:
    """`loopx init`."""
    assert run_loopx("init", root=root).exit_code == 0


def by_migration(root: Path) -> None:
    """A migration into `root` (what `loopx store migrate --to files DIR` runs)."""
    source = root.parent / f"{root.name}-source"
    build_project(source)
    migrate.migrate(FileStore(source), FileStore(root))


WAYS: dict[str, Callable[[Path], None]] = {"init": by_init, "cli": by_cli, "migration": by_migration}


@pytest.mark.parametrize("way", sorted(WAYS))
def test_a_new_file_store_has_the_gitignore(tmp_path: Path, way: str) -> None:
    root = tmp_path / "p"
    root.mkdir()
    WAYS[way](root)
    assert (root / ".loopx/.gitignore").read_text() == GITIGNORE
    assert FileStore(root).is_initialized()


@pytest.mark.parametrize("way", sorted(WAYS))
def test_an_existing_gitignore_is_never_changed(tmp_path: Path, way: str) -> None:
    root = tmp_path / "p"
    (root / ".loopx").mkdir(parents=True)
    (root / ".loopx/.gitignore").write_bytes(b"# the project's own\n")
    WAYS[way](root)
    assert (root / ".loopx/.gitignore").read_bytes() == b"# the project's own\n"


def test_init_of_an_initialised_store_writes_nothing(tmp_path: Path) -> None:
    store = build_project(tmp_path)
    (tmp_path / ".loopx/.gitignore").unlink()
    assert store.init() is False and not (tmp_path / ".loopx/.gitignore").exists()
