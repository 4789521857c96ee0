"""The append-only JSONL ledger: torn-tail safe appends and a backward tail reader.

Events are appended under the goal lock with a strictly increasing `seq` and a
non-decreasing `at`, so the spends of a rolling window are always the file's tail:
`read_tail` reads backwards and stops at the first event older than the window, which
keeps should-run flat however long the ledger grows.
"""

from __future__ import annotations

import errno
import os
from typing import TYPE_CHECKING

from loopx_core.errors import StateInvalidError
from loopx_core.models import codec
from loopx_core.models.records import LedgerEvent
from loopx_core.store.atomic import (
    MAX_APPENDED_BYTES,
    MAX_DOCUMENT_BYTES,
    NotAFileError,
    is_link,
    kind_of,
    not_a_file,
    open_stored,
    shown,
    two_parts,
)

if TYPE_CHECKING:
    from collections.abc import Iterator
    from datetime import datetime
    from pathlib import Path

_BLOCK = 64 * 1024


def reverse_lines(
    path: Path | str, *, root: Path | str | None = None, what: str = "append-only file"
) -> Iterator[bytes]:
    """Yield complete lines from the end of the file backwards (a torn last line is skipped).

    Missing is no lines. What is not a regular file, a file over `MAX_APPENDED_BYTES` or a
    line over `MAX_DOCUMENT_BYTES` is a `StateInvalidError` naming the file (`root`: shown
    from it, else by its last two parts); nothing ever blocks on a FIFO.
    """
    where = two_parts(path) if root is None else shown(path, root)
    try:
        fd, position = open_stored(path, what=what, where=where, limit=MAX_APPENDED_BYTES)
    except FileNotFoundError:
        if is_link(path):
            raise not_a_file(what, where, "a symbolic link to nothing") from None
        return
    try:
        carry: list[bytes] = []  # the pieces of the line being gathered backwards, last piece first
        carried = 0
        terminated = False  # found the newline that ends the last complete line
        while position > 0:
            step = min(_BLOCK, position)
            position -= step
            try:
                chunk = os.pread(fd, step, position)
            except OSError as exc:
                raise unreadable(path, exc) from None
            index = chunk.rfind(b"\n")
            if index < 0:
                carry.append(chunk)
                carried += len(chunk)
                _check_line(carried, what, where)
                continue
            line = chunk[index + 1 :] + b"".join(reversed(carry))
            if terminated and line.strip():
                yield line
            terminated = True  # before it: what followed the last newline, empty or a torn append
            lines = chunk[:index].split(b"\n")
            for line in reversed(lines[1:]):
                if line.strip():
                    yield line
            carry, carried = [lines[0]], len(lines[0])
        if terminated:
            line = b"".join(reversed(carry))
            if line.strip():
                yield line
    finally:
        os.close(fd)


def _check_line(length: int, what: str, where: str) -> None:
    """Refuse a line (still being gathered backwards) longer than any LoopX writes."""
    if length > MAX_DOCUMENT_BYTES:
        raise NotAFileError(
            f"{what} at {where} has a line over {MAX_DOCUMENT_BYTES // (1024 * 1024)} MiB: "
            "it is not a LoopX file (`loopx doctor` reports it)",
            path=where,
        )


def unreadable(path: Path | str, exc: OSError) -> StateInvalidError:
    """An append-only file that cannot be opened (a directory, no permission) as one line."""
    name = two_parts(path)
    return StateInvalidError(f"{name} is unreadable: {exc.strerror or exc}", path=name)


def parse_event(path: Path | str, line: bytes, root: Path | str | None) -> LedgerEvent:
    """One ledger line, schema-checked (an invalid line is a `StateInvalidError` naming the file)."""
    return codec.parse(line, LedgerEvent, what="a line of the ledger", where=shown(path, root))


def read_tail(path: Path | str, since: datetime, *, root: Path | str | None = None) -> list[LedgerEvent]:
    """Events with `at >= since`, oldest first, reading only the file's tail."""
    events: list[LedgerEvent] = []
    where = shown(path, root)
    for line in reverse_lines(path, root=root, what="ledger"):
        event = codec.parse(line, LedgerEvent, what="a line of the ledger", where=where)
        if event.at < since:
            break
        events.append(event)
    events.reverse()
    return events


def read_all(path: Path | str, *, root: Path | str | None = None) -> list[LedgerEvent]:
    """Every committed event, oldest first."""
    where = shown(path, root)
    lines = reverse_lines(path, root=root, what="ledger")
    events = [codec.parse(line, LedgerEvent, what="a line of the ledger", where=where) for line in lines]
    events.reverse()
    return events


def last_event(path: Path | str, *, root: Path | str | None = None) -> LedgerEvent | None:
    """The newest committed event, or None for an empty ledger."""
    for line in reverse_lines(path, root=root, what="ledger"):
        return parse_event(path, line, root)
    return None


def append_line(path: Path | str, line: bytes) -> None:
    """Append one JSON line durably; call with the goal lock held.

    A previous append that crashed mid-line left a fragment with no newline: it was never
    acknowledged, so it is cut off before the new line is written.
    """
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        # never through a symbolic link: its target may be any file of the user's, outside .loopx/
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NONBLOCK | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP and os.path.islink(path):
            where = two_parts(path)
            raise NotAFileError(
                f"{where} is a symbolic link: LoopX never appends through one (it may name a file "
                "outside .loopx/); put the file itself there",
                path=where,
            ) from None
        raise unreadable(path, exc) from None
    try:
        kind = kind_of(os.fstat(fd).st_mode)
        if kind is not None:  # a FIFO or a device opened for writing: never appended to
            raise not_a_file("append-only file", two_parts(path), kind)
        size = os.lseek(fd, 0, os.SEEK_END)
        if size:
            cut = _torn_tail_start(fd, size)
            if cut is not None:
                os.ftruncate(fd, cut)
                os.lseek(fd, cut, os.SEEK_SET)
        os.write(fd, line.rstrip(b"\n") + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)


def _torn_tail_start(fd: int, size: int) -> int | None:
    """Offset where an unterminated last line starts, or None if the file ends in a newline."""
    if os.pread(fd, 1, size - 1) == b"\n":
        return None
    position = size
    while position > 0:
        step = min(_BLOCK, position)
        position -= step
        chunk = os.pread(fd, step, position)
        index = chunk.rfind(b"\n")
        if index >= 0:
            return position + index + 1
    return 0
