"""Atomic file writes (temp file, fsync, rename) and capped, kind-checked reads of records.

Every file LoopX keeps is read by `read_record` and written by `write_record`, through the one
codec (`loopx_core.models.codec`).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from loopx_core.errors import NotFoundError, StateInvalidError
from loopx_core.models import codec
from loopx_core.models.record import Record

if TYPE_CHECKING:
    R = TypeVar("R", bound=Record)


def two_parts(path: Path | str) -> str:
    """The last two parts of `path` (`goals/demo`): how a message names a file outside the root."""
    return "/".join(Path(path).parts[-2:])


def atomic_write_bytes(path: Path | str, data: bytes, *, durable: bool = True, folder: bool = True) -> None:
    """Replace `path` with `data` so a reader sees the old file or the new one, never half.

    `durable` (the default, for every file that is the truth): the data is fsynced before the
    rename and the folder after it, so the new file survives a crash. `durable=False` is only
    for derived data rebuilt from files already made durable (the receipt index): a crash may
    leave the old file, none, or an empty or zero-filled one, and its reader rebuilds it.
    `folder=False` leaves the folder's fsync to the caller, who renames another file in the
    same folder and then calls `fsync_dir` once for both.
    """
    import tempfile  # (with shutil) only a command that writes loads it

    parent = os.path.dirname(path)
    try:
        os.makedirs(parent, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=parent)
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
        unlink_missing(tmp)
        if isinstance(exc, OSError):
            raise _unwritable(path, exc) from None
        raise
    if durable and folder:
        fsync_dir(parent)


def _unwritable(path: Path | str, exc: OSError) -> StateInvalidError:
    """A failed write as one line naming the file by its last two parts (never the full path)."""
    name = two_parts(path)
    return StateInvalidError(f"cannot write {name}: {exc.strerror or exc}", path=name)


def unlink_missing(path: Path | str) -> None:
    """Remove `path` if it is there."""
    Path(path).unlink(missing_ok=True)


def fsync_dir(directory: Path | str) -> None:
    """Make a rename in `directory` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_record(path: Path | str, record: Record, *, durable: bool = True) -> None:
    """Write a record as indented JSON, atomically (`durable`: see `atomic_write_bytes`)."""
    atomic_write_bytes(path, codec.document(record), durable=durable)


def shown(path: Path | str, root: Path | str | None) -> str:
    """`path` relative to the project root when inside it (messages never leak the full path).

    Outside the root (or with none): the path as given.
    """
    if root is not None:
        try:
            return str(Path(path).relative_to(root))
        except ValueError:
            pass
    return str(Path(path))


MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
"""The largest file LoopX reads whole (a JSON document, a run record): 64 MiB, far past any it
writes. A larger one (or one whose size cannot be known: a device) is refused, never read."""
MAX_APPENDED_BYTES = 1024 * 1024 * 1024
"""The largest append-only file (the ledger, the run history), read from its end: 1 GiB."""

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)
_READ_FLAGS = (
    os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
)
"""O_NONBLOCK: opening a FIFO with no writer returns at once (fstat then refuses it)."""


class NotAFileError(StateInvalidError):
    """A stored path that is no regular file, or too big to be one LoopX wrote (exit 4)."""


def kind_of(mode: int) -> str | None:
    """What a file of `mode` is in words when it is not a regular file, else None."""
    if stat.S_ISREG(mode):
        return None
    for test, words in _KINDS:
        if test(mode):
            return words
    return "not a regular file"


def not_a_file(what: str, where: str, kind: str) -> NotAFileError:
    """The refusal of a stored path that is no regular file (a FIFO, a device, a folder...)."""
    return NotAFileError(
        f"{what} at {where} is {kind}, not a regular file: move it aside (`loopx doctor` reports it)",
        path=where,
    )


def too_big(what: str, where: str, size: int, limit: int) -> NotAFileError:
    """The refusal of a stored file over the size a LoopX file may have."""
    return NotAFileError(
        f"{what} at {where} is {size // (1024 * 1024)} MiB, over the {limit // (1024 * 1024)} MiB a "
        "LoopX file may be: move it aside (`loopx doctor` reports it)",
        path=where,
    )


def open_stored(
    path: Path | str, *, what: str, where: str, limit: int = MAX_DOCUMENT_BYTES
) -> tuple[int, int]:
    """Open a stored file for reading: its descriptor and size, refusing what is not a file.

    Never blocks (a FIFO opens at once with O_NONBLOCK, then fstat refuses it); a folder, a
    device, a socket or a symbolic link to one, a loop of links, or a file over `limit` bytes is
    a `StateInvalidError` naming `where`. Missing (a dangling link too) is `FileNotFoundError`,
    for the caller to answer. The caller closes the descriptor.
    """
    try:
        fd = os.open(path, _READ_FLAGS)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a socket (or a FIFO on some systems) cannot be opened
            raise not_a_file(what, where, "a socket or a pipe") from None
        if exc.errno == errno.ELOOP:
            raise not_a_file(what, where, "a loop of symbolic links") from None
        if exc.errno == errno.ENOTDIR:
            raise not_a_file(what, where, "under a file where a folder should be") from None
        raise StateInvalidError(f"{what} unreadable at {where}: {exc.strerror}", path=where) from None
    try:
        info = os.fstat(fd)
        kind = kind_of(info.st_mode)
        if kind is not None:
            raise not_a_file(what, where, kind)
        if info.st_size > limit:
            raise too_big(what, where, info.st_size, limit)
    except BaseException:
        os.close(fd)
        raise
    return fd, info.st_size


def read_capped(fd: int, size: int, *, what: str, where: str, limit: int = MAX_DOCUMENT_BYTES) -> bytes:
    """The rest of an open file (`size` its fstat size), refused past `limit` bytes even if it grows."""
    parts: list[bytes] = []
    total = 0
    want = size + 1  # one byte more than expected: a file that grew is seen growing
    while True:
        try:
            chunk = os.read(fd, min(want, limit + 1 - total))
        except OSError as exc:
            raise StateInvalidError(f"{what} unreadable at {where}: {exc.strerror}", path=where) from None
        if not chunk:
            break
        parts.append(chunk)
        total += len(chunk)
        if total > limit:
            raise too_big(what, where, total, limit)
        want = 1 << 16
    return parts[0] if len(parts) == 1 else b"".join(parts)


def read_bytes(
    path: Path | str, *, what: str, root: Path | str | None = None, limit: int = MAX_DOCUMENT_BYTES
) -> tuple[bytes, str]:
    """A stored file's bytes and its shown path; missing is `NotFoundError`, unreadable `StateInvalidError`.

    What is not a regular file, or is over `limit` bytes, is refused (`open_stored`).
    """
    where = shown(path, root)
    try:
        fd, size = open_stored(path, what=what, where=where, limit=limit)
    except FileNotFoundError:
        if is_link(path):
            raise not_a_file(what, where, "a symbolic link to nothing") from None
        raise NotFoundError(f"{what} not found at {where}") from None
    try:
        return read_capped(fd, size, what=what, where=where, limit=limit), where
    finally:
        os.close(fd)


def is_link(path: Path | str) -> bool:
    """True when `path` itself is a symbolic link (any error: False)."""
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except (OSError, ValueError):
        return False


def read_record(path: Path | str, cls: type[R], *, what: str, root: Path | str | None = None) -> R:
    """The record of `cls` stored at `path`: missing is `NotFoundError`; what is not a file, not
    JSON or not the record (or of another schema version) is refused, the file left as it is."""
    data, where = read_bytes(path, what=what, root=root)
    return codec.parse(data, cls, what=what, where=where)
