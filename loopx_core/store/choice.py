"""Which store a project uses: `LOOPX_STORE`, else `.loopx/store.json`, else the file store.

`.loopx/store.json` (`{"schema_version": 1, "store": "postgresql://host/db?sslmode=require"}`)
is written by `loopx init --store` and `loopx store migrate`; it never holds a credential
(a DSN with a password is refused before anything is written). `LOOPX_STORE` overrides it
for one process: `files`, or a DSN. psycopg is imported only when a DSN is chosen, and
pydantic only when a `store.json` is one the lean reader doubts, so the hot path loads
neither.
"""

from __future__ import annotations

import os
from _thread import allocate_lock

from loopx_core.errors import NotFoundError, UsageError
from loopx_core.models.record import Record
from loopx_core.store import dsn as dsns
from loopx_core.store import paths
from loopx_core.store.atomic import atomic_write_bytes
from loopx_core.store.files import STATE_DIR, FileStore

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, Literal

    from loopx_core.store.base import Store
    from loopx_core.store.config import StoreConfig

ENV_VAR = "LOOPX_STORE"
CONFIG_FILE = "store.json"
FILES = "files"


def __getattr__(name: str) -> Any:
    """`StoreConfig`, still importable from here; it loads (with pydantic) on first use."""
    if name == "StoreConfig":
        from loopx_core.store.config import StoreConfig

        return StoreConfig
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class StoreChoice(Record):
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


def config_path(root: Path) -> Path:
    """`.loopx/store.json`."""
    return root / STATE_DIR / CONFIG_FILE


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
    from loopx_core.store.config import StoreConfig

    config = StoreConfig(schema_version=1, store=target)
    atomic_write_bytes(path, config.model_dump_json(indent=2).encode() + b"\n")


def recorded(root: Path | str) -> str:
    """The store recorded for the project (`files` when none is)."""
    try:
        return _read_config(root).store
    except NotFoundError:
        return FILES


def _read_config(root: Path | str) -> StoreConfig:
    """`.loopx/store.json`, validated (by the generated lean reader, pydantic on doubt);
    `NotFoundError` when there is none. `root` may be a string: no pathlib (store/paths.py)."""
    root = os.fspath(root)
    path = os.path.join(root, STATE_DIR, CONFIG_FILE)
    if not paths.exists(path) and not paths.is_symlink(path):
        raise NotFoundError(f"store choice not found at {STATE_DIR}/{CONFIG_FILE}")
    from loopx_core.store.lean import read_file

    return read_file(path, "StoreConfig", what="store choice", root=root)  # type: ignore[no-any-return]


_SHARED: dict[tuple[Path, str], Store] = {}
_SHARED_LOCK = allocate_lock()  # threading's Lock, without importing threading on a tick


def open_target(root: Path | str, target: str, *, shared: bool = False, lean: bool = False) -> Store:
    """The store `target` names for the project at `root` (`shared`: one pooled store per process);
    the root may be a string for PostgreSQL (a tick's), a `FileStore` takes a `Path`. `lean`: a
    settlement command's team store, in lean objects (`postgres.lean_store`; files: ignored)."""
    if target == FILES:
        return FileStore(root)
    shown = dsns.shown(target)
    if lean and not shared:
        from loopx_core.store.postgres.lean_store import LeanSettlePostgresStore

        return LeanSettlePostgresStore(root, target, shown)
    from loopx_core.store.postgres import PostgresStore

    if not shared:
        return PostgresStore(root, target, shown)
    with _SHARED_LOCK:
        store = _SHARED.get((root, target))
        if store is None:
            store = _SHARED[(root, target)] = PostgresStore(root, target, shown, pooled=True)
        return store


_STARTED: dict[str, Any] = {}
"""Team stores whose connection a `TickStart` began: root -> store, for `open_for_tick`."""
_BEGUN: dict[str, tuple[str, Any]] = {}
"""What `begin_early` chose and began: root -> (the store's target, its wire connection or None)."""


def begin_early(root: str | None) -> None:
    """Begin the team store's connection now, if the project at `root` (`--root`, None: found
    from the working folder) has one the wire transport speaks to, so its server prepares the
    session while a settlement command imports its modules; `open_settle_store` takes it.
    Nothing is reported here: whatever goes wrong, the command meets again and reports."""
    try:
        from loopx_core.store.roots import find_root_text

        text = find_root_text(root)
        target = choose(text).target
        if target == FILES:
            _BEGUN[text] = (target, None)  # chosen once: `open_settle_store` does not read it again
            return
        from loopx_core.store.postgres.wire import WireConnection

        _BEGUN[text] = (target, WireConnection(target))  # a plain socket: nothing to close at exit
    except Exception:
        pass


def take_begun(root: str) -> tuple[str, Any] | None:
    """The target `begin_early` chose for `root` and the connection it began (or None), once
    (None: it chose nothing for that root)."""
    return _BEGUN.pop(root, None)


def forget_begun() -> None:
    """Close what `begin_early` began and no store took (a process that runs many commands
    must not hand one command's choice to the next)."""
    while _BEGUN:
        _, (_, conn) = _BEGUN.popitem()
        if conn is not None:
            conn.close()


class TickStart:
    """The team store's connection, begun before a tick's modules load; closed at the end.

    `with TickStart(root, goal_id):` around a tick (cli/entry.py's should-run and hooks): on a
    PostgreSQL store the connection begins without waiting (`wire.begin`, before even the
    store's own modules are imported), so the server prepares its session while this process
    imports them and the tick's, and `open_for_tick` hands the tick that store, which reads
    the goal's documents in its first statement. At the end the store is closed, so no exit
    handler is left and the process may leave at once. Nothing is reported here: whatever
    goes wrong (no root, a bad choice, no libpq) the tick finds again, and says as it always
    did; nothing begun is left open.
    """

    def __init__(self, root: str | None, goal_id: str | None = None) -> None:
        self.store: Any = None
        begun = None
        try:
            from loopx_core.store.roots import find_root_text

            text = find_root_text(root)
            target = choose(text).target
            if target == FILES:
                return
            from loopx_core.store.postgres import wire  # not the store's modules yet
            from loopx_core.store.postgres.lean_protocol import Doubt

            try:  # noqa: SIM105  (contextlib is not imported on a tick)
                begun = wire.begin(target)  # the startup packet goes now
            except Doubt:  # the tick's first read asks psycopg, as it always did
                pass
            store = self.store = open_target(text, target)
            store.lean_link.at_exit = False  # closed by `__exit__`, before the hot exit
            store.tick_goal = goal_id
            if begun is None:
                store.lean_link.enabled = False
            else:
                store.lean_link.adopt(begun)
            _STARTED[text] = store
        except Exception:  # the tick meets the same trouble and reports it
            if begun is not None:
                begun.close()
            if self.store is not None:
                self.store.close()
                self.store = None

    def __enter__(self) -> TickStart:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.store is not None:
            _STARTED.clear()
            self.store.close()


def open_for_tick(root: str) -> Any:
    """The store of the project at `root` (`roots.find_root_text`'s answer) for a tick: what
    `open_store(Path(root))` opens, except that a file store comes as its lean reads over string
    paths (`store.lean.LeanFileStore` on a `FileLayout`), so a tick on files never loads pathlib;
    the team store takes the string root as it is (the one a `TickStart` began, if it did)."""
    started = _STARTED.pop(root, None)
    if started is not None:  # chosen for this root by the tick's `TickStart`: not read again
        return started
    target = choose(root).target
    if target != FILES:
        return open_target(root, target)
    from loopx_core.store.files import FileLayout
    from loopx_core.store.lean import LeanFileStore

    return LeanFileStore(FileLayout(root))


def open_store(root: Path, *, shared: bool = False) -> Store:
    """The project's store: files by default, or the PostgreSQL store it records or the env names.

    `shared`: for a process that makes many calls from several threads (the MCP server): one
    store per root and DSN, with a connection pool.
    """
    return open_target(root, choose(root).target, shared=shared)
