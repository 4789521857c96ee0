"""Plan before writing: for every file, create / update / unchanged / merge / conflict / remove."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loopx_core.errors import ConflictError
from loopx_core.hosts.model import FacadeFile
from loopx_installer import merge
from loopx_installer.manifest import FileRecord, Manifest, sha256
from loopx_installer.paths import safe_path

STATUSES = ("create", "update", "unchanged", "merge", "conflict", "remove")


@dataclass
class Action:
    """What the installer will do to one file."""

    path: Path
    status: str
    before: str | None
    after: str | None
    """The file's text after the action (None: the file is removed or left as it is)."""
    owner: dict[str, Any] = field(default_factory=dict)
    """The manifest owner entry for this host after the action (empty on removal)."""
    detail: str = ""
    restore_original: bool = False
    force_replace: bool = False


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def _merged(kind: str, current: str | None, f: FacadeFile, host: str, what: str) -> str:
    if kind == "json":
        return merge.merge_json(current, f.content, f.owned_keys, what)
    if kind == "toml":
        return merge.merge_toml(current, f.content, f.owned_keys, what)
    return merge.merge_markdown(current, f.content, host)


def _unmerged(kind: str, current: str, owner: dict[str, Any], host: str, what: str) -> str | None:
    keys = tuple(tuple(k) for k in owner.get("owned_keys", []))
    if kind == "json":
        return merge.unmerge_json(current, owner["fragment"], keys, what)
    if kind == "toml":
        return merge.unmerge_toml(current, owner["fragment"], keys, what)
    return merge.unmerge_markdown(current, host)


def plan_install(
    host: str, files: list[tuple[FacadeFile, Path]], manifest: Manifest, *, force: bool
) -> list[Action]:
    """Actions that put `files` (facade file, base folder) in place for `host`."""
    actions: list[Action] = []
    wanted: set[str] = set()
    for f, base in files:
        path = safe_path(base, f.path)
        wanted.add(str(path))
        current = _read(path)
        record = manifest.files.get(str(path))
        actions.append(_install_one(host, f, path, current, record, force))
    for name, record in manifest.owned_by(host).items():
        if name not in wanted:  # installed before, no longer rendered: stale
            actions.append(_uninstall_one(host, Path(name), _read(Path(name)), record, manifest, force))
    return actions


def _install_one(
    host: str, f: FacadeFile, path: Path, current: str | None, record: FileRecord | None, force: bool
) -> Action:
    if f.merge == "owned":
        owner = {"merge": "owned", "sha256": sha256(f.content), "shared": f.shared}
        if current is None:
            return Action(path, "create", None, f.content, owner)
        if current == f.content:
            return Action(path, "unchanged", current, None, owner)
        ours = record is not None and sha256(current) == record.written_sha256
        if ours and (host in record.owners or f.shared):
            return Action(path, "update", current, f.content, owner)
        reason = (
            "edited since LoopX wrote it" if record is not None else "exists and was not written by LoopX"
        )
        if force:
            return Action(
                path,
                "update",
                current,
                f.content,
                owner,
                detail=f"{reason}; replaced (--force), backup kept",
                force_replace=True,
            )
        return Action(
            path, "conflict", current, None, {}, detail=f"{reason}; kept (use --force to replace it)"
        )
    owner = {"merge": f.merge, "fragment": f.content, "owned_keys": [list(k) for k in f.owned_keys]}
    try:
        after = _merged(f.merge, current, f, host, str(path))
    except ConflictError as exc:
        return Action(path, "conflict", current, None, {}, detail=exc.message)
    if current is None:
        return Action(path, "create", None, after, owner)
    if after == current:
        return Action(path, "unchanged", current, None, owner)
    return Action(path, "merge", current, after, owner)


def plan_uninstall(host: str, manifest: Manifest, *, force: bool) -> list[Action]:
    """Actions that take `host`'s files and keys back out, leaving everything else as it was."""
    return [
        _uninstall_one(host, Path(name), _read(Path(name)), record, manifest, force)
        for name, record in manifest.owned_by(host).items()
    ]


def _uninstall_one(
    host: str, path: Path, current: str | None, record: FileRecord, manifest: Manifest, force: bool
) -> Action:
    owner = record.owners[host]
    others = [h for h in record.owners if h != host]
    untouched = current is not None and sha256(current) == record.written_sha256
    if current is None:
        return Action(path, "remove", None, None, detail="already gone")
    if owner["merge"] == "owned":
        if others:
            return Action(path, "unchanged", current, None, detail=f"still used by {', '.join(others)}")
        if not untouched and not force:
            return Action(
                path,
                "conflict",
                current,
                None,
                dict(owner),
                detail="edited since LoopX wrote it; kept (use --force to remove it)",
            )
        return Action(path, "remove", current, record.original, restore_original=record.original is not None)
    if not others and untouched:
        return Action(path, "remove", current, record.original, restore_original=record.original is not None)
    try:
        after = _unmerged(owner["merge"], current, owner, host, str(path))
    except ConflictError as exc:
        return Action(path, "conflict", current, None, dict(owner), detail=exc.message)
    if after is None and record.original is None and not others:
        return Action(path, "remove", current, None)
    return Action(path, "merge", current, after if after is not None else "", detail="LoopX's part taken out")
