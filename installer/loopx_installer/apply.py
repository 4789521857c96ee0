"""Carry out a plan: atomic writes, backups before forced replacements, the manifest kept in step."""

from __future__ import annotations

import difflib
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

from loopx_core.store.atomic import atomic_write_bytes
from loopx_installer.manifest import FileRecord, Manifest, sha256
from loopx_installer.paths import prune_dirs
from loopx_installer.plan import Action


def diff(action: Action, shown: str) -> str:
    """A unified diff of what the action would do to the file."""
    before = (action.before or "").splitlines(keepends=True)
    after_text = (
        action.after if action.status in ("create", "update", "merge") or action.restore_original else ""
    )
    after = (after_text or "").splitlines(keepends=True)
    from_name = f"a/{shown}" if action.before is not None else "/dev/null"
    to_name = (
        f"b/{shown}"
        if after_text is not None and (action.status != "remove" or action.restore_original)
        else "/dev/null"
    )
    return "".join(difflib.unified_diff(before, after, from_name, to_name))


def _write(path: Path, text: str, executable: bool, record: FileRecord) -> None:
    if path.is_symlink():
        raise OSError(f"refusing to write through the symlink {path}")
    missing = [p for p in [path.parent, *path.parent.parents] if not p.exists()]
    record.created_dirs = sorted({*record.created_dirs, *(str(p) for p in missing)})
    _replace(path, text, 0o755 if executable else 0o644)


def _replace(path: Path, text: str, new_mode: int) -> None:
    """Write atomically, keeping an existing file's permissions (a private 0600 file stays private)."""
    mode = path.stat().st_mode & 0o777 if path.exists() else new_mode
    atomic_write_bytes(path, text.encode())
    os.chmod(path, mode)


def _remove(path: Path, record: FileRecord, emptied: set[str]) -> None:
    path.unlink(missing_ok=True)
    emptied.update(record.created_dirs)


def apply(host: str, actions: list[Action], manifest: Manifest, executables: set[str]) -> list[str]:
    """Perform the actions; returns the backups made. The manifest is saved at the end."""
    backups: list[str] = []
    emptied: set[str] = set()
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    for action in actions:
        name = str(action.path)
        record = manifest.files.get(name)
        if action.status == "conflict":
            continue
        if action.owner:  # install side: create / update / merge / unchanged
            if record is None:
                record = manifest.files[name] = FileRecord(original=action.before)
            if action.force_replace and action.before is not None:
                backup = manifest.path.parent / "backups" / stamp / name.lstrip("/")
                backup.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(action.path, backup)
                backups.append(str(backup))
            if action.after is not None:
                _write(action.path, action.after, name in executables, record)
            record.owners[host] = action.owner
            record.written_sha256 = sha256(action.after if action.after is not None else action.before)
            continue
        if record is None:
            continue
        record.owners.pop(host, None)  # uninstall side: remove / merge / unchanged
        if action.status == "remove":
            if action.restore_original and action.after is not None:
                _replace(action.path, action.after, 0o644)
            elif action.before is not None:
                _remove(action.path, record, emptied)
            if not record.owners:
                del manifest.files[name]
        elif action.status == "merge":
            if action.after:
                _replace(action.path, action.after, 0o644)
            else:
                _remove(action.path, record, emptied)
            record.written_sha256 = sha256(action.after)
            if not record.owners:
                del manifest.files[name]
    prune_dirs(emptied)
    manifest.save()
    return backups
