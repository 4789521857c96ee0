"""The install manifest: what LoopX put where, for whom, with which selectors, and what was there before.

Every path in it is relative to its base (the target, or a declared home such as
`$CODEX_HOME`), and every path read from it is confined to that base: a manifest that arrives
with a clone, a copied project or a hand edit can never point LoopX at a file elsewhere.
Schema 1 manifests (absolute paths) are migrated when every path lies inside a base, else
refused.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator

from loopx_core.errors import RefusedError, SchemaUnsupportedError, StateInvalidError
from loopx_core.hosts.model import Base
from loopx_core.store.atomic import atomic_write_bytes
from loopx_installer.paths import (
    MANIFEST,
    bases,
    confined,
    display,
    manifest_path,
    prune_dirs,
    relative_to_base,
)

SCHEMA_VERSION = 2
READABLE = (1, 2)
WHAT = "the install manifest"


def sha256(text: str | None) -> str | None:
    """The sha256 of a file's text (None for no file)."""
    return None if text is None else hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _absolute_folder(value: str) -> str:
    if not value.startswith("/") or len(value) > 4096 or any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise ValueError("must be an absolute folder path of printable text (at most 4096 characters)")
    return value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class OwnerModel(_Strict):
    """One host's share of a file."""

    merge: Literal["owned", "json", "toml", "markdown"]
    sha256: str | None = None
    shared: bool = False
    fragment: str | None = None
    owned_keys: list[list[str]] = Field(default_factory=list)
    host_keys: list[str] = Field(default_factory=list)
    created: list[list[str]] | None = None
    separated: bool | None = None
    """Markdown: the merge put a newline before its block (`merge.Fragment.separated`)."""

    @model_validator(mode="after")
    def _fragment_for_merges(self) -> OwnerModel:
        if self.merge in ("json", "toml") and self.fragment is None:
            raise ValueError(f"a {self.merge} merge needs its fragment")
        return self


class FileModel(_Strict):
    """One file, relative to its base."""

    base: str = Field(pattern=r"^[a-z][a-z0-9_]*$", max_length=80)
    """`target`, `home` or a base a host declares (`Base.name`)."""
    path: str
    owners: dict[str, OwnerModel]
    written_sha256: str | None = None
    original: str | None = None
    created_dirs: list[str] = Field(default_factory=list)


class PairModel(_Strict):
    """One goal/agent pair installed for a host (each may have files of its own, e.g. an automation)."""

    goal_id: str | None = None
    agent_id: str | None = None
    installed_at_ms: int = Field(ge=0, le=2**53)
    project: Annotated[str, AfterValidator(_absolute_folder)] | None = None
    """User scope: the absolute folder of the project the pair was installed for (its files,
    a Codex automation's `cwds`, render for it from any project). Rendered, never written to."""


class InstallModel(_Strict):
    """The selectors a host was installed with, reused by `--check` and re-install."""

    scope: Literal["project", "user"]
    layout: str | None = None
    loopx_command: str | None = None
    pairs: list[PairModel] = Field(default_factory=list)


class ManifestModel(_Strict):
    """The manifest file, schema 2."""

    schema_version: Literal[2]
    created_dirs: list[str] = Field(default_factory=list)
    installs: dict[str, InstallModel] = Field(default_factory=dict)
    files: list[FileModel] = Field(default_factory=list)


class _V1File(_Strict):
    owners: dict[str, OwnerModel]
    written_sha256: str | None = None
    original: str | None = None
    created_dirs: list[str] = Field(default_factory=list)


class _V1(_Strict):
    schema_version: Literal[1]
    created_dirs: list[str] = Field(default_factory=list)
    installed_at_ms: dict[str, int] = Field(default_factory=dict)
    files: dict[str, _V1File] = Field(default_factory=dict)


@dataclass
class FileRecord:
    """One file LoopX wrote: where (base + relative path), its owners, the sha LoopX last wrote."""

    base: str
    rel: str
    owners: dict[str, dict[str, Any]] = field(default_factory=dict)
    """host -> {"merge": kind, "sha256", "shared", "fragment", "owned_keys", "host_keys"}"""
    written_sha256: str | None = None
    original: str | None = None
    """The file's text before LoopX first wrote it; None if LoopX created it."""
    created_dirs: list[str] = field(default_factory=list)
    """Folders LoopX created for it, relative to the base ("." is the base itself)."""

    def to_model(self) -> FileModel:
        """The record as it is stored."""
        return FileModel(
            base=self.base,
            path=self.rel,
            owners={h: OwnerModel(**o) for h, o in sorted(self.owners.items())},
            written_sha256=self.written_sha256,
            original=self.original,
            created_dirs=sorted(set(self.created_dirs)),
        )


@dataclass
class Pair:
    """A goal/agent pair installed for a host (at user scope, for one project)."""

    goal_id: str | None
    agent_id: str | None
    installed_at_ms: int
    project: str | None = None
    """User scope: the project it was installed for (None: recorded before LoopX kept it)."""


@dataclass
class Install:
    """A host's install: scope, layout, how hosts run LoopX, and its goal/agent pairs (newest last)."""

    scope: str
    layout: str | None = None
    loopx_command: str | None = None
    pairs: list[Pair] = field(default_factory=list)


@dataclass
class Manifest:
    """All files LoopX installed under one manifest root."""

    path: Path
    roots: dict[str, Path]
    files: dict[str, FileRecord] = field(default_factory=dict)
    """Keyed by the file's absolute path (two bases naming one file share a record)."""
    created_dirs: list[str] = field(default_factory=list)
    """Folders created for the manifest itself, relative to the target."""
    installs: dict[str, Install] = field(default_factory=dict)
    kept: list[FileModel] = field(default_factory=list)
    """Records under a base no loaded host declares (its plugin is gone or blocked): kept as they
    are, untouched, until that host is back."""
    names: dict[str, str] = field(default_factory=dict)
    """How messages name each declared base (`$CODEX_HOME`)."""

    @classmethod
    def open(cls, scope: str, target: Path | None, declared: Iterable[Base]) -> Manifest:
        """The manifest of `scope` (or of `--target`), its bases resolved for this run.

        At user scope the target is the home folder: messages name its files `~/...`.
        """
        declared = list(declared)
        names = {b.name: b.shown for b in declared}
        if scope == "user" and target is None:
            names["target"] = "~"
        return cls.load(manifest_path(scope, target), bases(scope, target, declared), names)

    @classmethod
    def load(cls, path: Path, roots: dict[str, Path], names: dict[str, str] | None = None) -> Manifest:
        """Read, validate and confine the manifest (an empty one if there is none)."""
        where_shown = display(path, roots, names)  # `.loopx/facades.json`, or `~/.loopx/...` at user scope
        for folder in (path.parent, path.parent / "backups"):
            if folder.exists() and not folder.is_dir():
                shown = display(folder, roots, names)
                raise StateInvalidError(
                    f"{shown} is not a folder (LoopX keeps its manifest there)", path=shown
                )
        if not path.exists() and not path.is_symlink():
            return cls(path, roots, names=names or {})
        if not path.is_file():
            raise StateInvalidError(f"{WHAT} {where_shown} is not a regular file", path=where_shown)
        data = _parse(path, where_shown)
        version = data.get("schema_version")
        if version not in READABLE or isinstance(version, bool):
            raise SchemaUnsupportedError(
                f"{WHAT} {where_shown} has schema_version {str(version)[:40]!r}; this loopx reads "
                f"{', '.join(map(str, READABLE))} (file left unchanged)",
                path=where_shown,
            )
        manifest = cls(path, roots, names=names or {})
        try:
            if version == 1:
                manifest._migrate(_V1.model_validate(data))
            else:
                manifest._adopt(ManifestModel.model_validate(data))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])[:120] or "(root)"
            raise StateInvalidError(
                f"{WHAT} {where_shown} is invalid at {where}: {first['msg']}", path=where_shown
            ) from None
        return manifest

    def _adopt(self, model: ManifestModel) -> None:
        target = self.roots["target"]
        self.created_dirs = [_dir(target, d, ".loopx") for d in model.created_dirs]
        for rec in model.files:
            if rec.base not in self.roots:
                self.kept.append(rec)
                continue
            path = confined(self.roots[rec.base], rec.path, WHAT)
            self.files.setdefault(
                str(path),
                FileRecord(
                    rec.base,
                    rec.path,
                    {h: o.model_dump() for h, o in rec.owners.items()},
                    rec.written_sha256,
                    rec.original,
                    [_dir(self.roots[rec.base], d, rec.path) for d in rec.created_dirs],
                ),
            )
        self.installs = {
            host: Install(
                i.scope,
                i.layout,
                i.loopx_command,
                [Pair(p.goal_id, p.agent_id, p.installed_at_ms, p.project) for p in i.pairs],
            )
            for host, i in model.installs.items()
        }
        for host in {h for rec in self.files.values() for h in rec.owners} - set(self.installs):
            self.installs[host] = Install("project")

    def _migrate(self, model: _V1) -> None:
        """Schema 1 named files by absolute path: keep those inside a base, refuse the rest."""
        for name, rec in model.files.items():
            base, rel = self._locate(Path(name))
            path = confined(self.roots[base], rel, WHAT)
            dirs = [
                d
                for d in (relative_to_base(self.roots[base], Path(c)) for c in rec.created_dirs)
                if d is not None and f"{rel}/".startswith(f"{d}/")
            ]
            owners = {h: o.model_dump() for h, o in rec.owners.items()}
            self.files.setdefault(
                str(path), FileRecord(base, rel, owners, rec.written_sha256, rec.original, dirs)
            )
        target = self.roots["target"]
        self.created_dirs = [
            d for d in (relative_to_base(target, Path(c)) for c in model.created_dirs) if d == ".loopx"
        ]
        hosts = {h for rec in self.files.values() for h in rec.owners}
        self.installs = {
            h: Install("project", pairs=[Pair(None, None, model.installed_at_ms.get(h, 0))]) for h in hosts
        }

    def _locate(self, path: Path) -> tuple[str, str]:
        found = [
            (name, rel)
            for name in self.roots
            if (rel := relative_to_base(self.roots[name], path)) is not None and path.is_absolute()
        ]
        if not found:
            raise RefusedError(
                f"{WHAT} {self.shown(self.path)} (schema 1, absolute paths) names a file outside this target "
                "(was the project copied or moved?); nothing written. Delete the manifest and "
                "re-install, or remove LoopX's files by hand",
                code="outside_target",
            )
        return min(found, key=lambda item: len(item[1]))

    def absolute(self, record: FileRecord) -> Path:
        """The record's file (its base, as this run resolves it)."""
        return self.roots[record.base] / record.rel

    def shown(self, path: Path) -> str:
        """How messages name a file (never an absolute path)."""
        return display(path, self.roots, self.names)

    def dirs_of(self, record: FileRecord) -> list[Path]:
        """The folders LoopX created for a file, absolute."""
        root = self.roots[record.base]
        return [root if d == "." else root / d for d in record.created_dirs]

    def save(self) -> None:
        """Write it atomically, or remove it (and the folders made for it) when empty."""
        target = self.roots["target"]
        if not self.files and not self.kept:
            self.path.unlink(missing_ok=True)
            prune_dirs([target if d == "." else target / d for d in self.created_dirs])
            return
        if not self.path.parent.exists():
            self.created_dirs = sorted({*self.created_dirs, ".loopx"})
        model = ManifestModel(
            schema_version=SCHEMA_VERSION,
            created_dirs=sorted(set(self.created_dirs)),
            installs={
                h: InstallModel(
                    scope=i.scope,  # type: ignore[arg-type]
                    layout=i.layout,
                    loopx_command=i.loopx_command,
                    pairs=[PairModel(**vars(p)) for p in i.pairs],
                )
                for h, i in sorted(self.installs.items())
                if self.owned_by(h) or h in self._kept_owners()
            },
            files=[rec.to_model() for _, rec in sorted(self.files.items())] + self.kept,
        )
        atomic_write_bytes(self.path, model.model_dump_json(indent=2).encode() + b"\n")

    def _kept_owners(self) -> set[str]:
        return {h for rec in self.kept for h in rec.owners}

    def owned_by(self, host: str) -> dict[str, FileRecord]:
        """Files this host owns something in."""
        return {name: rec for name, rec in self.files.items() if host in rec.owners}


def _parse(path: Path, shown: str) -> dict[str, Any]:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise StateInvalidError(f"{WHAT} {shown} is unreadable: {exc.strerror}", path=shown) from None
    try:
        data = json.loads(raw, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        why = exc.msg if isinstance(exc, json.JSONDecodeError) else "not valid JSON"
        raise StateInvalidError(f"{WHAT} {shown} is not valid JSON ({why})", path=shown) from None
    if not isinstance(data, dict):
        raise StateInvalidError(f"{WHAT} {shown} is not a JSON object", path=shown)
    return data


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _dir(base: Path, folder: str, owned_path: str) -> str:
    """A created folder read from the manifest: the base itself or a folder on the way to the file."""
    if folder == "." or f"{owned_path}/".startswith(f"{folder}/"):
        confined(base, owned_path, WHAT)
        return folder
    raise RefusedError(
        f"{WHAT} {MANIFEST} names the folder {folder[:80]!r}, which does not lead to {owned_path[:80]!r}; "
        "nothing written",
        code="outside_target",
    )
