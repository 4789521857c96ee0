"""The receipt index (`.loopx/goals/<goal>/receipts.json`): exactly-once for the goal's whole life.

The ledger and the run history stay the truth; the index records how far into each it has
read (a byte offset) and where the line of every turn-bound spend, every void and every
indexed run starts. A lookup first catches up on lines appended since (a crash between an
append and the index write leaves at most those), so a retry finds its receipt however
long ago its turn ran, without reading back through the ledger. A missing or damaged index
is rebuilt from the files it indexes; one of a newer schema is refused like any state file.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal

from pydantic import Field

from loopx_core.errors import NotFoundError, SchemaUnsupportedError, StateInvalidError
from loopx_core.models.common import StrictModel
from loopx_core.models.ledger import LedgerEvent
from loopx_core.models.record import Record
from loopx_core.store.atomic import read_model, shown, version_shown, write_model
from loopx_core.store.ledger import parse_event, unreadable


class ReceiptIndex(StrictModel):
    """Offsets of receipt lines in the ledger and the run history, and how far each was read."""

    schema_version: Literal[1]
    ledger_offset: int = Field(default=0, ge=0)
    runs_offset: int = Field(default=0, ge=0)
    spends: dict[str, int] = Field(default_factory=dict)
    """Turn instance id -> offset of its spend line in `events.jsonl`."""
    voids: dict[str, int] = Field(default_factory=dict)
    """Voided event id -> offset of the void line."""
    runs: dict[str, int] = Field(default_factory=dict)
    """Run id -> offset of its line in `runs/index.jsonl`."""


class Sources(Record):
    """The files a goal's receipt index is derived from, and where it lives."""

    index: Path
    ledger: Path
    runs: Path
    root: Path


def load(src: Sources, *, ledger: bool = True, runs: bool = True) -> ReceiptIndex:
    """The index, caught up with the ledger and/or the run history and saved if it moved.

    Call with the goal lock held.
    """
    try:
        index = read_model(src.index, ReceiptIndex, what="receipt index", root=src.root)
    except SchemaUnsupportedError:
        if _other_version(src.index):
            raise  # written by another loopx: never rewritten by this one
        index = ReceiptIndex(schema_version=1)
    except (NotFoundError, StateInvalidError):
        index = ReceiptIndex(schema_version=1)  # derived data: rebuilt from the truth
    before = index.model_copy(deep=True)
    if ledger:
        _catch_up_ledger(index, src)
    if runs:
        _catch_up_runs(index, src)
    if index != before:  # no fsync: lost, emptied or zero-filled by a crash, it is rebuilt here
        write_model(src.index, index, durable=False)
    return index


def _other_version(path: Path) -> bool:
    """True when the file is a JSON object of another (or no) schema_version: not ours to rebuild."""
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(data, dict) and data.get("schema_version") != 1


def spend_of(src: Sources, turn_instance_id: str) -> LedgerEvent | None:
    """The spend event bound to `turn_instance_id`, if the ledger has one (goal lock held)."""
    return _event(src, lambda index: index.spends.get(turn_instance_id), "turn_instance_id", turn_instance_id)


def void_of(src: Sources, event_id: str) -> LedgerEvent | None:
    """The void of `event_id`, if the ledger has one (goal lock held)."""
    return _event(src, lambda index: index.voids.get(event_id), "voids_event_id", event_id)


def run_indexed(src: Sources, run_id: str) -> bool:
    """True when the run history already has a line for `run_id` (goal lock held)."""
    return run_id in load(src, ledger=False).runs


def _event(
    src: Sources, find: Callable[[ReceiptIndex], int | None], field: str, value: str
) -> LedgerEvent | None:
    for attempt in range(2):
        offset = find(load(src, runs=False))
        if offset is None:
            return None
        event = _event_at(src, offset)
        if event is not None and getattr(event, field) == value:
            return event
        if attempt == 0:  # the index points at another line: the files moved under it
            src.index.unlink(missing_ok=True)
    raise StateInvalidError(
        f"receipt index of {shown(src.ledger, src.root)} disagrees with the ledger",
        path=shown(src.index, src.root),
    )


def _event_at(src: Sources, offset: int) -> LedgerEvent | None:
    """The event whose line starts at `offset`, or None when no line starts there (a stale index)."""
    try:
        with src.ledger.open("rb") as handle:
            if offset:
                handle.seek(offset - 1)
                if handle.read(1) != b"\n":
                    return None  # the middle of a line: the index, not the ledger, is wrong
            handle.seek(offset)
            line = handle.readline()
    except OSError as exc:
        raise unreadable(src.ledger, exc) from None
    return parse_event(src.ledger, line, src.root) if line.endswith(b"\n") else None


def _lines(path: Path, offset: int) -> tuple[int, Iterator[tuple[int, bytes]]] | None:
    """The complete lines after `offset` with their offsets, and the new offset; None: re-read."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        size = 0
    except OSError as exc:
        raise unreadable(path, exc) from None
    if size < offset:
        return None
    if size == offset:
        return offset, iter(())
    try:
        with path.open("rb") as handle:
            if offset:
                handle.seek(offset - 1)
                if handle.read(1) != b"\n":
                    return None
            data = handle.read(size - offset)
    except OSError as exc:
        raise unreadable(path, exc) from None
    end = data.rfind(b"\n") + 1  # an unterminated tail is an append never acknowledged
    lines, position = [], offset
    for line in data[:end].split(b"\n")[:-1]:
        lines.append((position, line))
        position += len(line) + 1
    return offset + end, iter(lines)


def _catch_up_ledger(index: ReceiptIndex, src: Sources) -> None:
    found = _lines(src.ledger, index.ledger_offset)
    if found is None:
        index.ledger_offset, index.spends, index.voids = 0, {}, {}
        found = _lines(src.ledger, 0)
        assert found is not None
    index.ledger_offset, lines = found
    for position, line in lines:
        if not line.strip():
            continue
        event = parse_event(src.ledger, line, src.root)
        if event.kind == "spend" and event.turn_instance_id is not None:
            index.spends.setdefault(event.turn_instance_id, position)
        elif event.kind == "void" and event.voids_event_id is not None:
            index.voids.setdefault(event.voids_event_id, position)


def _catch_up_runs(index: ReceiptIndex, src: Sources) -> None:
    found = _lines(src.runs, index.runs_offset)
    if found is None:
        index.runs_offset, index.runs = 0, {}
        found = _lines(src.runs, 0)
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
        entry = json.loads(line)
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
