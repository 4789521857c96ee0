"""Atomic file writes (temp file, fsync, rename) and schema-checked reads.

pydantic loads only when a model is written or validated: writing bytes, naming a path or
finding that a file is missing needs none of it (the should-run path, docs/benchmarks.md).
"""

from __future__ import annotations

import json
import os

from loopx_core.errors import NotFoundError, SchemaUnsupportedError, StateInvalidError
from loopx_core.models.constants import SCHEMA_VERSION
from loopx_core.store.paths import make_folders, name_of, parent_of, pure, relative_parts, two_parts

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from pathlib import Path
    from typing import TypeVar

    from pydantic import BaseModel, ValidationError

    M = TypeVar("M", bound="BaseModel")


def atomic_write_bytes(path: Path | str, data: bytes, *, durable: bool = True, folder: bool = True) -> None:
    """Replace `path` with `data` so a reader sees the old file or the new one, never half.

    `path` may be a string: the write needs no pathlib (store/paths.py answers as it would).
    `durable` (the default, for every file that is the truth): the data is fsynced before the
    rename and the folder after it, so the new file survives a crash. `durable=False` is only
    for derived data rebuilt from files already made durable (the receipt index): a crash may
    leave the old file, none, or an empty or zero-filled one, and its reader rebuilds it.
    `folder=False` leaves the folder's fsync to the caller, who renames another file in the
    same folder and then calls `fsync_dir` once for both.
    """
    try:
        make_folders(parent_of(path))
        fd, tmp = _temporary(path)
    except OSError as exc:
        raise _unwritable(path, exc) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if durable:
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
    if durable and folder:
        fsync_dir(parent_of(path))


def _temporary(path: Path | str) -> tuple[int, str]:
    """A new, empty, private file beside `path` (`.<name>.<random>.tmp`), open for writing.

    What `tempfile.mkstemp` does (exclusive create, mode 0o600, a fresh name on a clash), without
    importing tempfile, which loads shutil, random and the compression modules: a hook that
    writes one small file would pay more for that import than for the write.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        tmp = os.path.join(parent_of(path), f".{name_of(path)}.{os.urandom(6).hex()}.tmp")
        try:
            return os.open(tmp, flags, 0o600), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {name_of(path)}")


def _unwritable(path: Path | str, exc: OSError) -> StateInvalidError:
    """A failed write as one line naming the file by its last two parts (never the full path)."""
    name = two_parts(path)
    return StateInvalidError(f"cannot write {name}: {exc.strerror or exc}", path=name)


def unlink_missing(path: Path | str) -> None:
    """`Path(path).unlink(missing_ok=True)`, with `os` alone."""
    try:  # noqa: SIM105 (contextlib.suppress would load contextlib for every write)
        os.unlink(path)
    except FileNotFoundError:
        pass


def fsync_dir(directory: Path | str) -> None:
    """Make a rename in `directory` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_model(path: Path, model: BaseModel, *, durable: bool = True) -> None:
    """Write a model as indented JSON, atomically (`durable`: see `atomic_write_bytes`)."""
    atomic_write_bytes(path, model.model_dump_json(indent=2).encode() + b"\n", durable=durable)


def shown(path: Path | str, root: Path | str | None) -> str:
    """`path` relative to the project root when inside it (messages never leak the full path).

    `str(Path(path).relative_to(root))` (pathlib's lexical comparison of the parts), or
    `str(Path(path))` outside the root; strings and paths alike.
    """
    text = pure(os.fspath(path))
    if root is not None:
        inside = relative_parts(text, pure(os.fspath(root)))
        if inside is not None:
            return "/".join(inside) or "."
    return text


def read_bytes(path: Path | str, *, what: str, root: Path | str | None = None) -> tuple[bytes, str]:
    """A stored file's bytes and its shown path; missing is `NotFoundError`, unreadable `StateInvalidError`."""
    where = shown(path, root)
    try:
        with open(path, "rb") as handle:  # what Path.read_bytes does
            return handle.read(), where
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
