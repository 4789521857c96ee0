"""The receipt index (`.loopx/goals/<goal>/receipts.json`): exactly-once for the goal's whole life.

The ledger and the run history stay the truth; the index records how far into each it has
read (a byte offset) and where the line of every turn-bound spend, every void and every
indexed run starts. A lookup first catches up on lines appended since (a crash between an
append and the index write leaves at most those), so a retry finds its receipt however
long ago its turn ran, without reading back through the ledger. A missing or damaged index
is rebuilt from the files it indexes; one of a newer schema is refused like any state file.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, NamedTuple

from loopx_core.errors import LoopxError, NotFoundError, SchemaUnsupportedError, StateInvalidError
from loopx_core.models import codec
from loopx_core.models.records import ReceiptIndex
from loopx_core.store.atomic import (
    MAX_APPENDED_BYTES,
    MAX_DOCUMENT_BYTES,
    NotAFileError,
    atomic_write_bytes,
    is_link,
    not_a_file,
    open_stored,
    read_bytes,
    shown,
    unlink_missing,
)
from loopx_core.store.ledger import parse_event, unreadable

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

_WHAT = "receipt index"


def fresh() -> ReceiptIndex:
    """An empty index: everything is read again from the start of each file."""
    return ReceiptIndex(schema_version=1)


class Sources(NamedTuple):
    """The files a goal's receipt index is derived from, and where it lives."""

    index: Path
    ledger: Path
    runs: Path | str
    root: Path


def _read(src: Sources) -> Any:
    """The stored index; a missing or damaged one is a fresh index (rebuilt from the truth)."""
    try:
        data, _ = read_bytes(src.index, what=_WHAT, root=src.root)
    except NotAFileError:
        raise  # a FIFO, a device or a folder is no damage a crash leaves: never replaced
    except (NotFoundError, StateInvalidError):
        return fresh()
    try:
        return codec.parse(data, ReceiptIndex, what=_WHAT, where=shown(src.index, src.root))
    except SchemaUnsupportedError:
        if _other_version(src.index):
            raise  # written by another loopx: never rewritten by this one
        return fresh()
    except StateInvalidError:
        return fresh()


def load(src: Sources, *, ledger: bool = True, runs: bool = True) -> Any:
    """The index, caught up with the ledger and/or the run history and saved if it moved.

    Call with the goal lock held.
    """
    index = _read(src)
    before = index.replace()
    if ledger:
        _catch_up_ledger(index, src)
    if runs:
        _catch_up_runs(index, src)
    if index != before:  # no fsync: lost, emptied or zero-filled by a crash, it is rebuilt here
        atomic_write_bytes(src.index, codec.document(index), durable=False)
    return index


def _other_version(path: Path) -> bool:
    """True when the file is a JSON object of another (or no) schema_version: not ours to rebuild."""
    try:
        data = codec.loads(read_bytes(path, what=_WHAT)[0])
    except (LoopxError, ValueError, RecursionError):
        return False
    return isinstance(data, dict) and data.get("schema_version") != 1


def spend_of(src: Sources, turn_instance_id: str) -> Any:
    """The spend event bound to `turn_instance_id`, if the ledger has one (goal lock held)."""
    return _event(src, lambda index: index.spends.get(turn_instance_id), "turn_instance_id", turn_instance_id)


def void_of(src: Sources, event_id: str) -> Any:
    """The void of `event_id`, if the ledger has one (goal lock held)."""
    return _event(src, lambda index: index.voids.get(event_id), "voids_event_id", event_id)


def run_indexed(src: Sources, run_id: str) -> bool:
    """True when the run history already has a line for `run_id` (goal lock held)."""
    return run_id in load(src, ledger=False).runs


def _event(src: Sources, find: Callable[[Any], int | None], field: str, value: str) -> Any:
    for attempt in range(2):
        offset = find(load(src, runs=False))
        if offset is None:
            return None
        event = _event_at(src, offset)
        if event is not None and getattr(event, field) == value:
            return event
        if attempt == 0:  # the index points at another line: the files moved under it
            unlink_missing(src.index)
    raise StateInvalidError(
        f"receipt index of {shown(src.ledger, src.root)} disagrees with the ledger",
        path=shown(src.index, src.root),
    )


def _event_at(src: Sources, offset: int) -> Any:
    """The event whose line starts at `offset`, or None when no line starts there (a stale index)."""
    where = shown(src.ledger, src.root)
    try:
        fd, _ = open_stored(src.ledger, what="ledger", where=where, limit=MAX_APPENDED_BYTES)
    except FileNotFoundError:
        return None
    try:
        if offset and os.pread(fd, 1, offset - 1) != b"\n":
            return None  # the middle of a line: the index, not the ledger, is wrong
        with open(fd, "rb", closefd=False) as handle:
            handle.seek(offset)
            line = handle.readline(MAX_DOCUMENT_BYTES + 1)
    except OSError as exc:
        raise unreadable(src.ledger, exc) from None
    finally:
        os.close(fd)
    return _parse(src, line) if line.endswith(b"\n") else None


def _parse(src: Sources, line: bytes) -> Any:
    """One ledger line as an event."""
    return parse_event(src.ledger, line, src.root)


def _lines(path: Path, offset: int, root: Path) -> tuple[int, Iterator[tuple[int, bytes]]] | None:
    """The complete lines after `offset` with their offsets, and the new offset; None: re-read.

    What is not a regular file (or is over `MAX_APPENDED_BYTES`) is refused, never read.
    """
    where = shown(path, root)
    what = "run history" if os.path.basename(path) == "index.jsonl" else "ledger"
    try:
        fd, size = open_stored(path, what=what, where=where, limit=MAX_APPENDED_BYTES)
    except FileNotFoundError:
        if is_link(path):
            raise not_a_file(what, where, "a symbolic link to nothing") from None
        fd, size = -1, 0
    try:
        if size < offset:
            return None
        if size == offset:
            return offset, iter(())
        if offset and os.pread(fd, 1, offset - 1) != b"\n":
            return None
        data = _read_at(fd, offset, size - offset)
    except OSError as exc:
        raise unreadable(path, exc) from None
    finally:
        if fd >= 0:
            os.close(fd)
    end = data.rfind(b"\n") + 1  # an unterminated tail is an append never acknowledged
    lines, position = [], offset
    for line in data[:end].split(b"\n")[:-1]:
        lines.append((position, line))
        position += len(line) + 1
    return offset + end, iter(lines)


def _read_at(fd: int, offset: int, count: int) -> bytes:
    """`count` bytes from `offset` (fewer at the end of the file), read in one or a few calls."""
    parts, total = [], 0
    while total < count:
        chunk = os.pread(fd, count - total, offset + total)
        if not chunk:
            break
        parts.append(chunk)
        total += len(chunk)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _catch_up_ledger(index: Any, src: Sources) -> None:
    found = _lines(src.ledger, index.ledger_offset, src.root)
    if found is None:
        index.ledger_offset, index.spends, index.voids = 0, {}, {}
        found = _lines(src.ledger, 0, src.root)
        assert found is not None
    index.ledger_offset, lines = found
    for position, line in lines:
        if not line.strip():
            continue
        event = _parse(src, line)
        if event.kind == "spend" and event.turn_instance_id is not None:
            index.spends.setdefault(event.turn_instance_id, position)
        elif event.kind == "void" and event.voids_event_id is not None:
            index.voids.setdefault(event.voids_event_id, position)


def _catch_up_runs(index: Any, src: Sources) -> None:
    found = _lines(src.runs, index.runs_offset, src.root)
    if found is None:
        index.runs_offset, index.runs = 0, {}
        found = _lines(src.runs, 0, src.root)
        assert found is not None
    index.runs_offset, lines = found
    for position, line in lines:
        run_id = _run_id(line, src)
        if run_id is not None:
            index.runs.setdefault(run_id, position)


def _run_id(line: bytes, src: Sources) -> str | None:
    """The run id of a history line, read as the history's one reader reads it.

    The append-only rule (docs/state.md): nothing is appended after a complete line this
    loopx cannot read. A damaged line (not JSON, not UTF-8, a mistyped or unknown field) is
    `StateInvalidError`, a line of another schema version `SchemaUnsupportedError`; the file is
    left unchanged and `loopx doctor` names it.
    """
    if not line.strip():
        return None
    from loopx_core.models.records import RunIndexEntry

    where = shown(src.runs, src.root)
    return codec.parse(line, RunIndexEntry, what="a line of the run history", where=where).run_id
