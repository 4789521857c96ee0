"""Carry out a plan: all or nothing, atomic writes, backups before forced replacements, the manifest in step."""

from __future__ import annotations

import difflib
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

from loopx_core.errors import RefusedError
from loopx_core.store.atomic import atomic_write_bytes
from loopx_installer.hostkeys import fingerprint
from loopx_installer.manifest import FileRecord, Manifest, sha256
from loopx_installer.paths import confined, prune_dirs, relative_to_base
from loopx_installer.plan import Action


def diff(action: Action) -> str:
    """A unified diff of what the action would do to the file."""
    shown = action.shown
    before = (action.before or "").splitlines(keepends=True)
    writes = action.status in ("create", "update", "merge") or action.restore_original
    after_text = action.after if writes else ""
    after = (after_text or "").splitlines(keepends=True)
    from_name = f"a/{shown}" if action.before is not None else "/dev/null"
    to_name = (
        f"b/{shown}"
        if after_text is not None and (action.status != "remove" or action.restore_original)
        else "/dev/null"
    )
    return "".join(difflib.unified_diff(before, after, from_name, to_name))


def blocked(actions: list[Action], force: bool) -> int:
    """How many conflicts stop the whole run: any, unless --force (which writes what it can)."""
    return 0 if force else sum(1 for a in actions if a.status == "conflict")


def _created(path: Path, root: Path) -> list[str]:
    """Folders on the way to `path` (inside its base) that do not exist yet, relative to the base."""
    missing = [p for p in [path.parent, *path.parent.parents] if not p.exists()]
    found = []
    for folder in missing:
        if folder == root:
            found.append(".")
        elif (rel := relative_to_base(root, folder)) is not None:
            found.append(rel)
    return found


def _write(path: Path, text: str, mode: int) -> None:
    """Write atomically, keeping an existing file's permissions (a private 0600 file stays private)."""
    if path.is_symlink():
        raise RefusedError(
            "refusing to write through a symlink that appeared while installing", code="symlink"
        )
    if path.exists():
        mode = path.stat().st_mode & 0o777
    atomic_write_bytes(path, text.encode("utf-8"))
    os.chmod(path, mode)


def _backup(manifest: Manifest, action: Action, stamp: str) -> str:
    target = manifest.roots["target"]
    rel = f".loopx/backups/{stamp}/{action.base}/{action.rel}"
    backup = confined(target, rel, "the backup folder")
    backup.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(action.path, backup)
    return rel


def _record_sha(record: FileRecord, text: str | None) -> str | None:
    keys = sorted({k for owner in record.owners.values() for k in owner.get("host_keys") or []})
    owned = all(owner.get("merge") == "owned" for owner in record.owners.values())
    return fingerprint(text, record.rel, keys) if owned else sha256(text)


def _rebase(record: FileRecord, action: Action) -> None:
    """After a write over the user's edits, only their text as it is now may ever be put back."""
    if action.rebase:
        record.original = action.original
    if action.forget:
        record.written_sha256 = None


def _remember(record: FileRecord, action: Action, fresh: bool) -> None:
    """Record what LoopX wrote. A file LoopX leaves as it is (`unchanged`) keeps the sha of what
    LoopX last wrote: re-recording the file's current text would pass the user's edits since off
    as LoopX's, and uninstall would then put back the bytes from before the install over them.
    An owned file left as it is is exactly LoopX's rendering, so its sha may be taken again."""
    owned = all(owner.get("merge") == "owned" for owner in record.owners.values())
    if action.after is not None:
        record.written_sha256 = _record_sha(record, action.after)
    elif fresh or owned:
        record.written_sha256 = _record_sha(record, action.before)
    _rebase(record, action)


def apply(
    host: str, actions: list[Action], manifest: Manifest, executables: set[str], *, force: bool
) -> list[str]:
    """Perform the actions unless a conflict blocks them all; returns the backups made (shown paths).

    The manifest is saved at the end.
    """
    if blocked(actions, force):
        return []
    backups: list[str] = []
    emptied: set[Path] = set()
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    for action in actions:
        if action.status == "conflict":
            continue
        name = str(action.path)
        record = manifest.files.get(name)
        if action.force_replace and action.before is not None:
            backups.append(_backup(manifest, action, stamp))
        if action.owner:  # install side: create / update / merge / unchanged
            fresh = record is None or action.status == "create"
            if fresh:
                # a record whose file is gone is stale: the file LoopX creates now is this host's alone
                record = manifest.files[name] = FileRecord(action.base, action.rel, original=action.before)
            assert record is not None
            if action.after is not None:
                root = manifest.roots[record.base]
                record.created_dirs = sorted({*record.created_dirs, *_created(action.path, root)})
                _write(action.path, action.after, 0o755 if name in executables else 0o644)
            record.owners[host] = action.owner
            _remember(record, action, fresh)
            continue
        if record is None:
            continue
        record.owners.pop(host, None)  # uninstall side: remove / merge / unchanged
        if action.status == "remove":
            if action.restore_original and action.after is not None:
                _write(action.path, action.after, 0o644)
            elif action.before is not None:
                action.path.unlink(missing_ok=True)
                emptied.update(manifest.dirs_of(record))
        elif action.status == "merge":
            if action.after:
                _write(action.path, action.after, 0o644)
            else:
                action.path.unlink(missing_ok=True)
                emptied.update(manifest.dirs_of(record))
            record.written_sha256 = sha256(action.after) if action.after else None
            _rebase(record, action)
        if not record.owners:
            if not action.path.exists():
                emptied.update(manifest.dirs_of(record))
            del manifest.files[name]
    prune_dirs(emptied)
    _hand_down(manifest, emptied)
    manifest.save()
    return backups


def _hand_down(manifest: Manifest, folders: set[Path]) -> None:
    """Folders a removed file's record made but others still use pass to the records of those files,
    so the last file out removes them."""
    for folder in (f for f in folders if f.is_dir()):
        for record in manifest.files.values():
            root = manifest.roots[record.base]
            path = manifest.absolute(record)
            if folder == root:
                record.created_dirs = sorted({*record.created_dirs, "."})
            elif path.is_relative_to(folder) and (rel := relative_to_base(root, folder)) is not None:
                record.created_dirs = sorted({*record.created_dirs, rel})
