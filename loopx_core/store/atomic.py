"""Atomic file writes (temp file, fsync, rename) and schema-checked reads.

pydantic loads only when a model is written or validated: writing bytes, naming a path or
finding that a file is missing needs none of it (the should-run path, docs/benchmarks.md).
"""

from __future__ import annotations

import json
import os

from loopx_core.errors import NotFoundError, SchemaUnsupportedError, StateInvalidError
from loopx_core.models.constants import SCHEMA_VERSION

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from pathlib import Path
    from typing import TypeVar

    from pydantic import BaseModel, ValidationError

    M = TypeVar("M", bound="BaseModel")


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Replace `path` with `data` so a reader sees the old file or the new one, never half."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = _temporary(path)
    except OSError as exc:
        raise _unwritable(path, exc) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        try:  # noqa: SIM105 (contextlib.suppress would load contextlib for every write)
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError):
            raise _unwritable(path, exc) from None
        raise
    fsync_dir(path.parent)


def _temporary(path: Path) -> tuple[int, str]:
    """A new, empty, private file beside `path` (`.<name>.<random>.tmp`), open for writing.

    What `tempfile.mkstemp` does (exclusive create, mode 0o600, a fresh name on a clash), without
    importing tempfile, which loads shutil, random and the compression modules: a hook that
    writes one small file would pay more for that import than for the write.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        tmp = str(path.parent / f".{path.name}.{os.urandom(6).hex()}.tmp")
        try:
            return os.open(tmp, flags, 0o600), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {path.name}")


def _unwritable(path: Path, exc: OSError) -> StateInvalidError:
    """A failed write as one line naming the file by its last two parts (never the full path)."""
    name = f"{path.parent.name}/{path.name}"
    return StateInvalidError(f"cannot write {name}: {exc.strerror or exc}", path=name)


def fsync_dir(directory: Path) -> None:
    """Make a rename in `directory` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_model(path: Path, model: BaseModel) -> None:
    """Write a model as indented JSON, atomically."""
    atomic_write_bytes(path, model.model_dump_json(indent=2).encode() + b"\n")


def shown(path: Path, root: Path | None) -> str:
    """`path` relative to the project root when inside it (messages never leak the full path)."""
    if root is not None:
        try:
            return str(path.relative_to(root))
        except ValueError:
            pass
    return str(path)


def read_bytes(path: Path, *, what: str, root: Path | None = None) -> tuple[bytes, str]:
    """A stored file's bytes and its shown path; missing is `NotFoundError`, unreadable `StateInvalidError`."""
    where = shown(path, root)
    try:
        return path.read_bytes(), where
    except FileNotFoundError:
        raise NotFoundError(f"{what} not found at {where}") from None
    except OSError as exc:
        raise StateInvalidError(f"{what} unreadable at {where}: {exc.strerror}", path=where) from None


def read_model(path: Path, model: type[M], *, what: str, root: Path | None = None) -> M:
    """Read and validate a JSON file; refuse unknown or newer schemas without touching it."""
    data, where = read_bytes(path, what=what, root=root)
    from pydantic import ValidationError

    try:
        return model.model_validate_json(data)
    except ValidationError as exc:
        raise explain(where, data, what, exc) from None


def version_shown(version: object) -> str:
    """A file's `schema_version` in words for a refusal: its number or text, else what it is."""
    if version is None:
        return "no schema_version"
    if isinstance(version, bool) or not isinstance(version, int | float | str):
        kind = (
            "true or false"
            if isinstance(version, bool)
            else "an object"
            if isinstance(version, dict)
            else "a list"
        )
        return f"a schema_version that is {kind}"
    return f"schema_version {json.dumps(version)[:40]}"


def explain(path: str, data: bytes, what: str, exc: ValidationError) -> StateInvalidError:
    """Turn a validation failure into one line that says what is wrong with the file (or line).

    Another `schema_version` (newer, unknown or missing) is a `SchemaUnsupportedError`.
    """
    try:
        raw = json.loads(data)
    except RecursionError:
        return StateInvalidError(f"{what} at {path} is nested too deeply to be a LoopX file", path=path)
    except ValueError as bad:
        hint = " (empty)" if not data.strip() else " (truncated?)" if "Expecting" in str(bad) else ""
        return StateInvalidError(f"{what} at {path} is not valid JSON{hint}: {bad}", path=path)
    version = raw.get("schema_version") if isinstance(raw, dict) else None
    if version != SCHEMA_VERSION:
        return SchemaUnsupportedError(
            f"{what} at {path} has {version_shown(version)}; this loopx reads {SCHEMA_VERSION} "
            "(file left unchanged)",
            path=path,
        )
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "(root)"
    return StateInvalidError(f"{what} at {path} is invalid at {where}: {first['msg']}", path=path)
