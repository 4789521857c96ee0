"""`loopx store show` and `loopx store migrate`, and the store choice `loopx init --store` records.

A DSN is printed redacted everywhere (`postgresql://host/db`), never with a user, a password
or options, and one carrying a password is refused before anything is written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from loopx_core.cli.common import FormatOption
from loopx_core.cli.formats import Format
from loopx_core.cli.output import emit, reporting
from loopx_core.errors import RefusedError, UsageError
from loopx_core.store import choice
from loopx_core.store.base import Store
from loopx_core.store.files import FileStore
from loopx_core.store.roots import STATE_DIR, find_root

app = typer.Typer(
    add_completion=False,
    help="Where the project's state lives: files, or a PostgreSQL team store.",
    no_args_is_help=True,
)


def _root(ctx: typer.Context) -> Path:
    return find_root((ctx.find_root().obj or {}).get("root"))


def init_store(root: Path, target: str | None) -> tuple[Store, bool]:
    """Open (creating) the store `target` names, else the chosen one; record a DSN for the project.

    A project whose state is in files is not pointed at a database by `init` (that would
    hide its state): `loopx store migrate` moves it.
    """
    if target is None:
        chosen = choice.choose(root)
        target = chosen.target
        if chosen.source != "env":  # only a DSN named now is recorded
            store = choice.open_target(root, target)
            return store, store.init()
    target = choice.normalised(target)
    recorded = choice.recorded(root)
    if target == choice.FILES:
        if recorded != choice.FILES:
            raise RefusedError(
                f"this project keeps its state in {choice.StoreChoice(recorded, 'project').shown}: "
                "move it back with `loopx store migrate --to files DIR`",
                code="store_in_use",
            )
    else:
        from loopx_core.store import dsn

        dsn.refuse_credentials(target)
        if recorded == choice.FILES and FileStore(root).is_initialized():
            raise RefusedError(
                "this project keeps its state in files under .loopx/: move it with "
                "`loopx store migrate --to postgresql://...` instead",
                code="store_in_use",
            )
        if recorded not in (choice.FILES, target):
            raise RefusedError(
                f"this project already uses {choice.StoreChoice(recorded, 'project').shown}: "
                "move it with `loopx store migrate --to ...`",
                code="store_in_use",
            )
    store = choice.open_target(root, target)
    created = store.init()
    choice.record(root, target)
    return store, created


GITIGNORE = """\
# Written by `loopx init`: what of .loopx/ must not be committed (see docs/committing.md).
# The registry, goal state, runs, ledger and facades.json are the loop's record: commit them.
locks/
backups/
quarantine/
notices/
*.prev
*.tmp
"""


def write_gitignore(root: Path) -> bool:
    """Write `.loopx/.gitignore` if `.loopx/` exists and has none; True when written.

    A .gitignore already there is the project's own and is never changed.
    """
    from loopx_core.store.atomic import atomic_write_bytes

    folder = root / STATE_DIR
    path = folder / ".gitignore"
    if not folder.is_dir() or folder.is_symlink() or path.exists() or path.is_symlink():
        return False
    atomic_write_bytes(path, GITIGNORE.encode())
    return True


def _describe(root: Path) -> dict[str, Any]:
    chosen = choice.choose(root)
    info: dict[str, Any] = {
        "store": chosen.shown,
        "kind": "files" if chosen.is_files else "postgresql",
        "chosen_by": {"env": "LOOPX_STORE", "project": f"{STATE_DIR}/{choice.CONFIG_FILE}"}.get(
            chosen.source, "default"
        ),
    }
    store = choice.open_target(root, chosen.target)
    if not chosen.is_files:
        from loopx_core.store.postgres import PostgresStore
        from loopx_core.store.postgres.schema import LATEST

        assert isinstance(store, PostgresStore)
        try:
            info["schema_version"] = store.schema_version()
            info["schema_supported"] = LATEST
            info["initialized"] = store.is_initialized()
        finally:
            store.close()
        if FileStore(root).is_initialized():
            info["note"] = "files under .loopx/ hold older state that is not in use"
    else:
        info["initialized"] = store.is_initialized()
    return info


def _show_markdown(info: dict[str, Any]) -> str:
    lines = [f"Store: {info['store']} ({info['kind']}, chosen by {info['chosen_by']})"]
    if "schema_version" in info:
        lines.append(f"Schema version: {info['schema_version']} (this loopx: {info['schema_supported']})")
    lines.append(f"Initialised: {'yes' if info['initialized'] else 'no (run `loopx init`)'}")
    if info.get("note"):
        lines.append(f"Note: {info['note']}")
    return "\n".join(lines)


@app.command("show")
def show(ctx: typer.Context, fmt: FormatOption = Format.auto) -> None:
    """Which store the project uses (DSN redacted), its schema version, whether it is initialised."""
    with reporting(fmt):
        info = _describe(_root(ctx))
        emit(info, fmt, _show_markdown)


@app.command("migrate")
def migrate(
    ctx: typer.Context,
    to: Annotated[
        str,
        typer.Option(
            "--to",
            help="Target: a PostgreSQL DSN, or `files` followed by a project folder.",
            show_default=False,
        ),
    ],
    folder: Annotated[
        str | None, typer.Argument(help="With `--to files`: the project folder to write .loopx/ into.")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace other state the target holds.")] = False,
    fmt: FormatOption = Format.auto,
) -> None:
    """Copy the project's state to another store, verify counts and checksum, and use it.

    Idempotent: a target already holding exactly this state is left as it is. A target
    holding other state is refused unless --force. The source is never changed. When the
    target is a database, or this project's own folder, the project uses it from now on.
    """
    from loopx_core.store.migrate import migrate as run

    with reporting(fmt):
        root = _root(ctx)
        target = choice.normalised(to)
        if target == choice.FILES:
            if not folder:
                raise UsageError("--to files needs the project folder to write into, e.g. `--to files .`")
            destination: Path = Path(folder).expanduser().resolve()
            if destination.exists() and not destination.is_dir():
                raise UsageError("--to files needs a folder")
        elif folder is not None:
            raise UsageError("a folder goes with `--to files` only")
        else:
            from loopx_core.store import dsn

            dsn.refuse_credentials(target)
            destination = root
        source = choice.open_store(root)
        if target == choice.FILES and destination == root and isinstance(source, FileStore):
            raise UsageError("the project already keeps its state in files here")
        target_store = choice.open_target(destination, target)
        report = run(source, target_store, force=force)
        switched = target != choice.FILES or destination == root
        if switched:
            choice.record(root, target)
        data = {**report.to_json(), "project_uses": target_store.label if switched else source.label}
        emit(data, fmt, _migrate_markdown)


def _migrate_markdown(data: dict[str, Any]) -> str:
    counts = ", ".join(f"{n} {kind}" for kind, n in data["counts"].items())
    verb = "Copied" if data["copied"] else "Already there:"
    return (
        f"{verb} {data['source']} -> {data['target']} ({counts}); verified {data['checksum'][:19]}...\n"
        f"The project uses {data['project_uses']}."
    )
