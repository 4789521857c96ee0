"""The receipt index (`.loopx/goals/<goal>/receipts.json`): exactly-once for the goal's whole life.

The ledger and the run history stay the truth; the index records how far into each it has
read (a byte offset) and where the line of every turn-bound spend, every void and every
indexed run starts. A lookup first catches up on lines appended since (a crash between an
append and the index write leaves at most those), so a retry finds its receipt however
long ago its turn ran, without reading back through the ledger. A missing or damaged index
is rebuilt from the files it indexes; one of a newer schema is refused like any state file.

No pydantic on the common path: the index is read and written as its generated lean twin
(`loopx_core.models.lean.ReceiptIndex`: the same values, pydantic's bytes;
tests/adversarial/test_lean_receipt_index.py); any doubt is `ReceiptIndex`'s to judge.
The ledger's lines are read as pydantic `LedgerEvent`s, or (`Sources.lean`, the settlement
store) as their lean twins through `store.lean`, with pydantic judging any doubt.
"""

from __future__ import annotations

import os

from loopx_core import jsontext
from loopx_core.errors import LoopxError, NotFoundError, SchemaUnsupportedError, StateInvalidError
from loopx_core.models import lean
from loopx_core.models.record import Record
from loopx_core.store.atomic import (
    MAX_APPENDED_BYTES,
    MAX_DOCUMENT_BYTES,
    NotAFileError,
    atomic_write_bytes,
    is_link,
    not_a_file,
    open_stored,
    read_bytes,
    read_model,
    shown,
    unlink_missing,
    version_shown,
)
from loopx_core.store.ledger import parse_event, unreadable
from loopx_core.store.paths import name_of

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path
    from typing import Any


_WHAT = "receipt index"


def __getattr__(name: str) -> Any:
    """`ReceiptIndex`, the pydantic model of the file, loaded on first use."""
    if name != "ReceiptIndex":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from loopx_core.store.receipt_index import ReceiptIndex

    return ReceiptIndex


def fresh(
    ledger_offset: int = 0,
    runs_offset: int = 0,
    spends: dict[str, int] | None = None,
    voids: dict[str, int] | None = None,
    runs: dict[str, int] | None = None,
) -> Any:
    """A lean `ReceiptIndex` (its dicts copied, as pydantic's constructor copies them)."""
    return lean.ReceiptIndex(
        schema_version=1,
        ledger_offset=ledger_offset,
        runs_offset=runs_offset,
        spends={} if spends is None else spends,
        voids={} if voids is None else voids,
        runs={} if runs is None else runs,
    )


def copied(index: Any) -> Any:
    """An independent copy of a lean index (what `model_copy(deep=True)` gave)."""
    return fresh(index.ledger_offset, index.runs_offset, index.spends, index.voids, index.runs)


def lean_index(data: bytes) -> Any | None:
    """`data` as a lean `ReceiptIndex` (the generated checker), or None where pydantic must judge."""
    try:
        return lean.CHECKERS["ReceiptIndex"](lean.loads(data))
    except (lean.Doubt, ValueError, RecursionError):  # json's errors are ValueErrors
        return None


def encode(index: Any) -> bytes:
    """The file's bytes: `ReceiptIndex(...).model_dump_json(indent=2)` and a newline."""
    try:
        return lean.dumps(index) + b"\n"  # type: ignore[no-any-return]
    except lean.Doubt:  # a value the lean writer cannot vouch for: pydantic's to write or refuse
        from loopx_core.store.receipt_index import ReceiptIndex

        model = ReceiptIndex.model_validate(lean.dump(index))
        return model.model_dump_json(indent=2).encode() + b"\n"


class Sources(Record):
    """The files a goal's receipt index is derived from, and where it lives."""

    index: Path
    ledger: Path
    runs: Path
    root: Path
    lean: bool = False
    """Events come back as lean objects (the settlement store) rather than pydantic models."""


def _read(src: Sources) -> Any:
    """The stored index; a missing or damaged one is a fresh index (rebuilt from the truth)."""
    try:
        data, _ = read_bytes(src.index, what=_WHAT, root=src.root)
    except NotAFileError:
        raise  # a FIFO, a device or a folder is no damage a crash leaves: never replaced
    except (NotFoundError, StateInvalidError):
        return fresh()
    found = lean_index(data)
    if found is not None:
        return found
    from loopx_core.store.receipt_index import ReceiptIndex

    try:  # pydantic judges (the file is read again: only a doubtful index pays for that)
        model = read_model(src.index, ReceiptIndex, what=_WHAT, root=src.root)
    except SchemaUnsupportedError:
        if _other_version(src.index):
            raise  # written by another loopx: never rewritten by this one
        return fresh()
    except (NotFoundError, StateInvalidError):
        return fresh()
    return fresh(model.ledger_offset, model.runs_offset, model.spends, model.voids, model.runs)


def load(src: Sources, *, ledger: bool = True, runs: bool = True) -> Any:
    """The index, caught up with the ledger and/or the run history and saved if it moved.

    Call with the goal lock held.
    """
    index = _read(src)
    before = copied(index)
    if ledger:
        _catch_up_ledger(index, src)
    if runs:
        _catch_up_runs(index, src)
    if index != before:  # no fsync: lost, emptied or zero-filled by a crash, it is rebuilt here
        atomic_write_bytes(src.index, encode(index), durable=False)
    return index


def _other_version(path: Path) -> bool:
    """True when the file is a JSON object of another (or no) schema_version: not ours to rebuild."""
    try:
        data = jsontext.loads(read_bytes(path, what=_WHAT)[0])
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
    """One ledger line as an event: a lean one for a lean store, else the pydantic model."""
    if src.lean:
        from loopx_core.store import lean

        return lean.parse_event(src.ledger, line, src.root)
    return parse_event(src.ledger, line, src.root)


def _lines(path: Path, offset: int, root: Path) -> tuple[int, Iterator[tuple[int, bytes]]] | None:
    """The complete lines after `offset` with their offsets, and the new offset; None: re-read.

    What is not a regular file (or is over `MAX_APPENDED_BYTES`) is refused, never read.
    """
    where = shown(path, root)
    what = "run history" if name_of(path) == "index.jsonl" else "ledger"
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
    """The run id of a history line; a damaged line is no receipt of ours (history reports it).

    A line of another schema version was written by another loopx: refused, never appended to.
    """
    try:
        entry = jsontext.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(entry, dict):
        return None
    version = entry.get("schema_version")
    if version != 1:
        where = shown(src.runs, src.root)
        raise SchemaUnsupportedError(
            f"a line of {where} has {version_shown(version)}; this loopx reads 1 (file left unchanged)",
            path=where,
        )
    run_id = entry.get("run_id")
    return run_id if isinstance(run_id, str) else None
