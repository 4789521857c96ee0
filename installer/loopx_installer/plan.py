"""Plan before writing: for every file, create / update / unchanged / merge / conflict / remove.

Planning reads every file and decides everything; nothing is written until every file has
been planned, so one conflict anywhere stops the whole run (unless `--force`).
"""

from __future__ import annotations

import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loopx_core.errors import ConflictError
from loopx_core.hosts.model import FacadeFile
from loopx_installer import merge
from loopx_installer.hostkeys import adopt, fingerprint
from loopx_installer.manifest import FileRecord, Manifest, sha256

STATUSES = ("create", "update", "unchanged", "merge", "conflict", "remove")


@dataclass
class Action:
    """What the installer will do to one file."""

    path: Path
    shown: str
    status: str
    before: str | None
    after: str | None
    """The file's text after the action (None: the file is removed or left as it is)."""
    owner: dict[str, Any] = field(default_factory=dict)
    """The manifest owner entry for this host after the action (empty on removal)."""
    detail: str = ""
    restore_original: bool = False
    force_replace: bool = False
    """Replaces something LoopX did not write (--force): the file is backed up first."""
    base: str = "target"
    rel: str = ""
    rebase: bool = False
    """The user edited the file since LoopX last wrote it: what uninstall may put back becomes
    `original` (the file as it is now without LoopX's parts), not the bytes before the install."""
    original: str | None = None
    forget: bool = False
    """The user's text cannot be told from LoopX's: record no sha, so nothing is ever restored."""


@dataclass(frozen=True)
class Placed:
    """A facade file and where it lands: the absolute path, and the base and path it is recorded by."""

    file: FacadeFile
    path: Path
    shown: str
    base: str
    rel: str


def read(path: Path, shown: str) -> str | None:
    """A file's UTF-8 text (None: no file); ConflictError for anything that is not readable text."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConflictError(f"{shown} cannot be read ({exc.strerror}); left unchanged") from None
    if not stat.S_ISREG(mode):
        raise ConflictError(f"{shown} is not a regular file; left unchanged")
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise ConflictError(f"{shown} is not UTF-8 text; left unchanged") from None
    except OSError as exc:
        raise ConflictError(f"{shown} cannot be read ({exc.strerror}); left unchanged") from None


def _keys(owner: dict[str, Any]) -> merge.Keys:
    return tuple(tuple(k) for k in owner.get("owned_keys") or [])


def _fragment(owner: dict[str, Any]) -> merge.Fragment:
    """The part of a file an owner entry says LoopX put there."""
    created = owner.get("created")
    made = None if created is None else tuple(tuple(k) for k in created)
    return merge.Fragment(owner.get("fragment") or "", _keys(owner), made, owner.get("separated"))


def _host_keys(record: FileRecord | None) -> list[str]:
    if record is None:
        return []
    return sorted({k for owner in record.owners.values() for k in owner.get("host_keys") or []})


def _hard(place: Placed, exc: ConflictError, current: str | None = None) -> Action:
    """A conflict --force cannot resolve: the file cannot be read or merged safely."""
    return Action(place.path, place.shown, "conflict", current, None, detail=exc.message)


def plan_install(host: str, files: list[Placed], manifest: Manifest, *, force: bool) -> list[Action]:
    """Actions that put `files` in place for `host` (and take out what it no longer renders)."""
    actions: list[Action] = []
    wanted: set[str] = set()
    for place in files:
        wanted.add(str(place.path))
        record = manifest.files.get(str(place.path))
        try:
            current = read(place.path, place.shown)
            action = _install_one(host, place, current, record, force)
        except ConflictError as exc:
            action = _hard(place, exc)
        action.base, action.rel = (record.base, record.rel) if record else (place.base, place.rel)
        actions.append(action)
    for name, record in manifest.owned_by(host).items():
        if name not in wanted:  # installed before, no longer rendered: stale
            actions.append(_uninstall(host, manifest, name, record, force))
    return actions


def _install_owned(
    host: str, place: Placed, current: str | None, record: FileRecord | None, force: bool
) -> Action:
    f = place.file
    owner = {
        "merge": "owned",
        "sha256": sha256(f.content),
        "shared": f.shared,
        "host_keys": list(f.host_keys),
    }
    act = Action(place.path, place.shown, "create", current, f.content, owner)
    if current is None:
        return act
    wanted = adopt(f.content, current, f.path, f.host_keys)
    act.after = wanted
    if current == wanted:
        act.status, act.after = "unchanged", None
        return act
    keys = sorted({*f.host_keys, *_host_keys(record)})
    ours = record is not None and fingerprint(current, f.path, keys) == record.written_sha256
    if ours and record is not None and (host in record.owners or f.shared):
        act.status = "update"
        return act
    reason = "edited since LoopX wrote it" if record is not None else "exists and was not written by LoopX"
    if force:
        act.status, act.force_replace = "update", True
        act.detail = f"{reason}; replaced (--force), backup kept"
        return act
    return Action(
        place.path,
        place.shown,
        "conflict",
        current,
        None,
        detail=f"{reason}; kept (use --force to replace it)",
    )


def _install_one(
    host: str, place: Placed, current: str | None, record: FileRecord | None, force: bool
) -> Action:
    f = place.file
    if f.merge == "owned":
        return _install_owned(host, place, current, record, force)
    owner = {"merge": f.merge, "fragment": f.content, "owned_keys": [list(k) for k in f.owned_keys]}
    add = merge.Fragment(f.content, f.owned_keys)
    previous = record.owners.get(host) if record is not None else None
    remove = None
    force_replace = False
    detail = ""
    if previous is not None and previous.get("merge") == f.merge and previous.get("fragment") != f.content:
        remove = _fragment(previous)
    made = set(merge.missing(f.merge, current, add, place.shown))
    if previous is not None and previous.get("created") is not None:
        made |= {tuple(k) for k in previous["created"]}
    owner["created"] = [list(k) for k in sorted(made)]
    if f.merge == "markdown":
        placed = merge.markdown_separated(current, host)
        owner["separated"] = placed if placed is not None or previous is None else previous.get("separated")
    if previous is None:
        foreign = merge.foreign_owned(f.merge, current, add, place.shown, host)
        if foreign and not force:
            return Action(
                place.path,
                place.shown,
                "conflict",
                current,
                None,
                detail=f"{', '.join(foreign)} already there and not written by LoopX; kept "
                "(use --force to replace it)",
            )
        if foreign:
            force_replace, detail = True, f"{', '.join(foreign)} replaced (--force), backup kept"
    after = merge.rewrite(f.merge, current, remove, add, place.shown, host)
    if current is None:
        return Action(place.path, place.shown, "create", None, after, owner)
    if after == current:
        return Action(place.path, place.shown, "unchanged", current, None, owner)
    action = Action(
        place.path, place.shown, "merge", current, after, owner, detail, force_replace=force_replace
    )
    return _rebased(action, record, current)


def user_text(owners: dict[str, dict[str, Any]], text: str | None, shown: str) -> str | None:
    """`text` without every merged owner's part: the user's own text (None: nothing of theirs)."""
    for name, owner in owners.items():
        if text is None:
            break
        if owner.get("merge") in ("json", "toml", "markdown"):
            text = merge.rewrite(owner["merge"], text, _fragment(owner), None, shown, name)
    return text


def _rebased(action: Action, record: FileRecord | None, current: str | None) -> Action:
    """Mark a write over a file the user edited since LoopX last wrote it: the bytes from before
    the install no longer hold what the user wrote, so uninstall may only put back the user's
    text as it is now (LoopX's parts taken out), never the older original."""
    if record is None or current is None or sha256(current) == record.written_sha256:
        return action
    action.rebase = True
    try:
        action.original = user_text(record.owners, current, action.shown)
    except ConflictError:
        action.original = None
        action.rebase = False
        action.forget = True
    return action


def plan_uninstall(host: str, manifest: Manifest, *, force: bool) -> list[Action]:
    """Actions that take `host`'s files and keys back out, leaving everything else as it was."""
    return [_uninstall(host, manifest, name, rec, force) for name, rec in manifest.owned_by(host).items()]


def _uninstall(host: str, manifest: Manifest, name: str, record: FileRecord, force: bool) -> Action:
    path = Path(name)
    shown = manifest.shown(path)
    try:
        action = _uninstall_one(host, path, shown, read(path, shown), record, force)
    except ConflictError as exc:
        action = Action(path, shown, "conflict", None, None, detail=exc.message)  # even with --force
    action.base, action.rel = record.base, record.rel
    return action


def _uninstall_one(
    host: str, path: Path, shown: str, current: str | None, record: FileRecord, force: bool
) -> Action:
    owner = record.owners[host]
    others = [h for h in record.owners if h != host]
    if current is None:
        return Action(path, shown, "remove", None, None, detail="already gone")
    restore = {"restore_original": record.original is not None}
    if owner["merge"] == "owned":
        if others:
            return Action(
                path, shown, "unchanged", current, None, detail=f"still used by {', '.join(others)}"
            )
        untouched = fingerprint(current, record.rel, _host_keys(record)) == record.written_sha256
        if untouched:
            return Action(path, shown, "remove", current, record.original, **restore)
        if not force:
            detail = "edited since LoopX wrote it; kept (use --force to remove it)"
            return Action(path, shown, "conflict", current, None, detail=detail)  # nothing is written
        detail = "edited since LoopX wrote it; removed (--force), backup kept"
        return Action(
            path, shown, "remove", current, record.original, detail=detail, force_replace=True, **restore
        )
    if not others and sha256(current) == record.written_sha256:
        return Action(path, shown, "remove", current, record.original, **restore)
    after = merge.rewrite(owner["merge"], current, _fragment(owner), None, shown, host)
    if after is None and record.original is None and not others:
        return Action(path, shown, "remove", current, None)
    if after == current:
        return Action(path, shown, "unchanged", current, None, detail="LoopX's part was already gone")
    action = Action(path, shown, "merge", current, after or "", detail="LoopX's part taken out")
    return _rebased(action, record, current)
