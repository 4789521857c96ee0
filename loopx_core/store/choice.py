"""Which store a project uses: `LOOPX_STORE`, else `.loopx/store.json`, else the file store.

`.loopx/store.json` (`{"schema_version": 1, "store": "postgresql://host/db?sslmode=require"}`)
is written by `loopx init --store` and `loopx store migrate`; it never holds a credential
(a DSN with a password is refused before anything is written). `LOOPX_STORE` overrides it
for one process: `files`, or a DSN. psycopg is imported only when a DSN is chosen.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NamedTuple

from loopx_core.errors import NotFoundError, UsageError
from loopx_core.models.constants import SCHEMA_VERSION
from loopx_core.models.records import StoreConfig
from loopx_core.store import dsn as dsns
from loopx_core.store.atomic import read_record, write_record
from loopx_core.store.files import STATE_DIR, FileStore

if TYPE_CHECKING:
    from loopx_core.store.base import Store

ENV_VAR = "LOOPX_STORE"
CONFIG_FILE = "store.json"
FILES = "files"


class StoreChoice(NamedTuple):
    """A chosen store: `files` or a PostgreSQL DSN, and where the choice came from."""

    target: str
    source: Literal["env", "project", "default"]

    @property
    def is_files(self) -> bool:
        """True for the file store."""
        return self.target == FILES

    @property
    def shown(self) -> str:
        """`files`, or the DSN redacted."""
        return FILES if self.is_files else dsns.shown(self.target)


def config_path(root: Path | str) -> Path:
    """`.loopx/store.json`."""
    return Path(root) / STATE_DIR / CONFIG_FILE


def normalised(target: str) -> str:
    """`files` or a DSN, stripped; anything else is a `UsageError` (never echoing the value)."""
    value = target.strip()
    if value == FILES or dsns.is_dsn(value):
        return value
    raise UsageError("a store is `files` or a PostgreSQL DSN (postgresql://... or libpq key=value)")


def choose(root: Path | str) -> StoreChoice:
    """The store for `root`: `LOOPX_STORE`, else the recorded one, else files."""
    env = os.environ.get(ENV_VAR, "").strip()
    if env:
        return StoreChoice(normalised(env), "env")
    try:
        config = _read_config(root)
    except NotFoundError:
        return StoreChoice(FILES, "default")
    return StoreChoice(normalised(config.store), "project")


def record(root: Path, target: str) -> None:
    """Record `target` as the project's store (`files` removes the record); never a credential."""
    target = normalised(target)
    path = config_path(root)
    if target == FILES:
        path.unlink(missing_ok=True)
        return
    dsns.refuse_credentials(target)
    write_record(path, StoreConfig(schema_version=SCHEMA_VERSION, store=target))


def recorded(root: Path | str) -> str:
    """The store recorded for the project (`files` when none is)."""
    try:
        return _read_config(root).store
    except NotFoundError:
        return FILES


def _read_config(root: Path | str) -> StoreConfig:
    """`.loopx/store.json`, validated; `NotFoundError` when there is none."""
    path = config_path(root)
    if not os.path.lexists(path):
        raise NotFoundError(f"store choice not found at {STATE_DIR}/{CONFIG_FILE}")
    return read_record(path, StoreConfig, what="store choice", root=root)


_SHARED: dict[tuple[Path, str], Store] = {}
_SHARED_LOCK = threading.Lock()


def open_target(root: Path | str, target: str, *, shared: bool = False) -> Store:
    """The store `target` names for the project at `root` (`shared`: one pooled store per process)."""
    root = Path(root)
    if target == FILES:
        return FileStore(root)
    shown = dsns.shown(target)
    from loopx_core.store.postgres import PostgresStore

    if not shared:
        return PostgresStore(root, target, shown)
    with _SHARED_LOCK:
        store = _SHARED.get((root, target))
        if store is None:
            store = _SHARED[(root, target)] = PostgresStore(root, target, shown, pooled=True)
        return store


def open_store(root: Path | str, *, shared: bool = False) -> Store:
    """The project's store: files by default, or the PostgreSQL store it records or the env names.

    `shared`: for a process that makes many calls from several threads (the MCP server): one
    store per root and DSN, with a connection pool.
    """
    return open_target(root, choose(root).target, shared=shared)
