"""The install manifest: what LoopX put where, for whom, and what was there before."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loopx_core.errors import SchemaUnsupportedError, StateInvalidError
from loopx_core.store.atomic import atomic_write_bytes
from loopx_installer.paths import prune_dirs

SCHEMA_VERSION = 1


def sha256(text: str | None) -> str | None:
    """The sha256 of a file's text (None for no file)."""
    return None if text is None else hashlib.sha256(text.encode()).hexdigest()


@dataclass
class FileRecord:
    """One file LoopX wrote: its owners, the sha LoopX last wrote, what was there before."""

    owners: dict[str, dict[str, Any]] = field(default_factory=dict)
    """host -> {"merge": kind, "sha256": owned content sha, "fragment": ..., "owned_keys": [...]}"""
    written_sha256: str | None = None
    original: str | None = None
    """The file's text before LoopX first wrote it; None if LoopX created it."""
    created_dirs: list[str] = field(default_factory=list)
    """Folders LoopX created for it (removed again when empty)."""

    def to_json(self) -> dict[str, Any]:
        """The record as JSON data."""
        return {
            "owners": self.owners,
            "written_sha256": self.written_sha256,
            "original": self.original,
            "created_dirs": self.created_dirs,
        }


@dataclass
class Manifest:
    """All files LoopX installed under one manifest root."""

    path: Path
    files: dict[str, FileRecord] = field(default_factory=dict)
    created_dirs: list[str] = field(default_factory=list)
    """Folders created for the manifest itself."""
    installed_at_ms: dict[str, int] = field(default_factory=dict)
    """When each host was first installed here: renders reuse it, so re-install stays a no-op."""

    @classmethod
    def load(cls, path: Path) -> Manifest:
        """Read the manifest (an empty one if there is none)."""
        if not path.exists():
            return cls(path)
        try:
            data = json.loads(path.read_text())
        except ValueError as exc:
            raise StateInvalidError(f"install manifest {path} is not valid JSON: {exc.msg}") from None
        if data.get("schema_version") != SCHEMA_VERSION:
            raise SchemaUnsupportedError(
                f"install manifest {path} has schema_version {data.get('schema_version')!r}"
            )
        files = {
            name: FileRecord(
                owners=rec.get("owners", {}),
                written_sha256=rec.get("written_sha256"),
                original=rec.get("original"),
                created_dirs=rec.get("created_dirs", []),
            )
            for name, rec in data.get("files", {}).items()
        }
        return cls(path, files, data.get("created_dirs", []), data.get("installed_at_ms", {}))

    def save(self) -> None:
        """Write it atomically, or remove it (and the folders made for it) when empty."""
        if not self.files:
            self.path.unlink(missing_ok=True)
            prune_dirs(self.created_dirs)
            return
        if not self.path.parent.exists():
            missing = [p for p in [self.path.parent, *self.path.parent.parents] if not p.exists()]
            self.created_dirs = sorted({*self.created_dirs, *(str(p) for p in missing)})
        data = {
            "schema_version": SCHEMA_VERSION,
            "created_dirs": self.created_dirs,
            "installed_at_ms": self.installed_at_ms,
            "files": {name: rec.to_json() for name, rec in sorted(self.files.items())},
        }
        atomic_write_bytes(self.path, (json.dumps(data, indent=2) + "\n").encode())

    def owned_by(self, host: str) -> dict[str, FileRecord]:
        """Files this host owns something in."""
        return {name: rec for name, rec in self.files.items() if host in rec.owners}
