"""Where facade files go: bases per scope, and path checks (no symlinks, nothing outside a base).

Messages never show an absolute path: `display` names a file relative to the target, `~`, or
the environment variable of its base (`$CODEX_HOME/config.toml`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from loopx_core.errors import RefusedError, UsageError
from loopx_core.hosts.model import Base, FacadeFile

MANIFEST = ".loopx/facades.json"
"""The manifest's place under the target (project) or the home folder (user scope)."""
Roots = dict[str, Path]
"""Base name -> its folder for this run (`target`, `home`, then every declared base)."""


def bases(scope: str, target: Path | None, declared: Iterable[Base] = ()) -> Roots:
    """Absolute folder for each base name.

    Project scope (and any `--target`) puts everything under one folder; a `--target` that is a
    symlink is refused. User scope resolves each declared base from its environment variables,
    else its default under the home folder.
    """
    if target is not None and target.is_symlink():
        raise RefusedError(
            "refusing --target: it is a symlink (give the folder it points to)", code="symlink"
        )
    if target is not None and target.exists() and not target.is_dir():
        raise UsageError("--target must be a folder")
    declared = list(declared)
    if target is not None or scope == "project":
        root = (target or Path.cwd()).resolve()
        return {"target": root, "home": root, **{b.name: root for b in declared}}
    home = Path(os.environ.get("HOME") or Path.home()).resolve()
    roots = {"target": home, "home": home}
    for base in declared:
        value = next((os.environ[name] for name in base.env if os.environ.get(name)), None)
        roots[base.name] = Path(value).expanduser().resolve() if value else (home / base.default).resolve()
    return roots


def place(f: FacadeFile, scope: str, declared: dict[str, Base]) -> tuple[str, str]:
    """Where a host's file is recorded: (base, path). At project scope every base is the target,
    and a declared base's file moves into that base's `project` folder (`.codex/config.toml`)."""
    if scope != "project":
        return f.base, f.path
    base = declared.get(f.base)
    return "target", f"{base.project}/{f.path}" if base is not None and base.project else f.path


def manifest_path(scope: str, target: Path | None) -> Path:
    """The manifest of what LoopX installed: `<target>/.loopx/facades.json`, or `~/.loopx/facades.json`.

    `.loopx` (and the manifest itself) being a symlink is refused: writing through it would
    put LoopX's bookkeeping, and its backups, wherever the link points.
    """
    root = bases(scope, target)["target"]
    return confined(root, MANIFEST, "the manifest")


def _parts(relative: str) -> tuple[str, ...] | None:
    rel = PurePosixPath(relative)
    if rel.is_absolute() or "\\" in relative or "\x00" in relative:
        return None
    parts = tuple(relative.split("/"))
    if not parts or any(p in ("..", ".", "") for p in parts):
        return None
    return parts


def confined(base: Path, relative: str, what: str) -> Path:
    """`base/relative` for a path LoopX read from a file: refused (exit 7) if it leaves `base`.

    Refused: absolute paths, `..`, empty parts and any symlink on the way (or at the end).
    """
    parts = _parts(relative)
    if parts is None:
        named = "an absolute path" if relative.startswith(("/", "\\")) else repr(relative[:80])
        raise RefusedError(
            f"{what} names {named}, which is not a plain relative path inside its base; nothing written",
            code="outside_target",
        )
    path = base
    for index, part in enumerate(parts):
        path = path / part
        if path.is_symlink():
            shown = "/".join(parts[: index + 1])
            raise RefusedError(f"refusing to write through the symlink {shown}", code="symlink")
    return path


def safe_path(base: Path, relative: str) -> Path:
    """`base/relative` for a facade file: a plugin's bad path is a usage error, a symlink is refused."""
    if _parts(relative) is None:
        named = "an absolute path" if relative.startswith(("/", "\\")) else repr(relative[:80])
        raise UsageError(f"facade path {named} must be relative and stay inside its base")
    return confined(base, relative, "the facade")


def relative_to_base(base: Path, path: Path) -> str | None:
    """`path` as a POSIX path relative to `base`, None when it is not strictly inside."""
    try:
        rel = path.relative_to(base)
    except ValueError:
        return None
    return rel.as_posix() if rel.parts else None


def display(path: Path, roots: Roots, names: dict[str, str] | None = None) -> str:
    """A short name for a path: relative to the target, else `~/...` or `$CODEX_HOME/...`
    (`names`: how to name each base, `Base.shown`; `home` is `~`; a named target, the home
    folder at user scope, is named like the other bases)."""
    shown = {"home": "~", **(names or {})}
    target = roots["target"]
    if "target" not in shown and path.is_relative_to(target) and path != target:
        return path.relative_to(target).as_posix()
    found = [
        (name, root)
        for name, root in roots.items()
        if (name != "target" or "target" in shown) and path.is_relative_to(root)
    ]
    if found:
        name, root = max(found, key=lambda item: len(item[1].parts))
        rel = path.relative_to(root).as_posix()
        label = shown.get(name, name)
        return f"{label}/{rel}" if rel != "." else label
    return f"<outside>/{path.name}"


def prune_dirs(folders: set[Path] | list[Path]) -> None:
    """Remove folders LoopX created, deepest first, where nothing else lives in them now."""
    for folder in sorted(set(folders), key=lambda f: len(f.parts), reverse=True):
        if folder.is_symlink():
            continue
        with contextlib.suppress(OSError):
            folder.rmdir()
