"""Quarantine: a damaged file moves under `.loopx/quarantine/<time>/`, never deleted; restores."""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from loopx_core.errors import LoopxError, RefusedError
from loopx_core.models.record import Record
from loopx_core.store.atomic import MAX_APPENDED_BYTES, read_bytes, read_record, write_record
from loopx_core.store.files import STATE_DIR

R = TypeVar("R", bound=Record)

QUARANTINE = "quarantine"
PREVIOUS_SUFFIX = ".prev"
"""A store that keeps the previous good version of a file keeps it beside it, with this suffix."""


def _stamp(now: datetime) -> str:
    return now.strftime("%Y%m%dT%H%M%SZ")


def _confined(state: Path, folder: Path) -> None:
    """Make `folder` (under `state`), refusing to go through a symbolic link on the way.

    A damaged file may hold what the project keeps private (a notice sink's token, say): moved
    through a link, it would land wherever the link points, outside the project.
    """
    step = state
    for part in folder.relative_to(state).parts:
        step = step / part
        if step.is_symlink():
            raise RefusedError(
                f"refusing to quarantine through the symlink {Path(STATE_DIR) / step.relative_to(state)}: "
                "remove it (quarantine is a folder inside .loopx/), then repair again",
                code="symlink",
            )
    folder.mkdir(parents=True, exist_ok=True)


def _claim(state: Path, relative: Path, now: datetime, *, folder: bool = False) -> Path:
    """A quarantine place for `relative` no one else holds, claimed by creating it exclusively.

    Two repairs in the same second (or the same repair twice) get `<time>/`, `<time>-2/`, ...:
    a quarantined copy is never overwritten, even by a process racing this one.
    """
    number = 1
    while True:
        stamp = _stamp(now) if number == 1 else f"{_stamp(now)}-{number}"
        target = state / QUARANTINE / stamp / relative
        _confined(state, target.parent)
        try:
            if folder:
                os.mkdir(target)
            else:
                os.close(os.open(target, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
            return target
        except FileExistsError:
            number += 1


def quarantine(root: Path, path: Path, now: datetime, reason: str) -> str:
    """Move `path` (a file, or whatever stands in its place) into quarantine; its shown new place."""
    state = root / STATE_DIR
    relative = path.relative_to(state)
    target = _claim(state, relative, now, folder=path.is_dir() and not path.is_symlink())
    os.replace(path, target)  # over the empty place this call claimed
    note = {"from": str(Path(STATE_DIR) / relative), "at": now.isoformat(), "reason": reason[:300]}
    (target.parent / f"{target.name}.why.json").write_text(json.dumps(note, indent=2) + "\n")
    return str(target.relative_to(root))


def previous(path: Path, cls: type[R]) -> R | None:
    """The previous good version kept beside `path`, if there is one and it validates."""
    kept = path.with_name(path.name + PREVIOUS_SUFFIX)
    try:  # read_record: a FIFO or a device kept as `.prev` is refused, never read
        return read_record(kept, cls, what="previous version")
    except (LoopxError, OSError):
        return None


def restore(path: Path, record: Record) -> None:
    """Put a validated record back in place, atomically."""
    write_record(path, record)


def cut_torn_tail(root: Path, path: Path, now: datetime) -> str:
    """Cut an unterminated last line off an append-only file (the fragment kept in quarantine).

    Never through a symbolic link (the file it names may lie outside the project).
    """
    if path.is_symlink():
        raise RefusedError(
            f"{path.name} is a symbolic link: LoopX never cuts a file through one", code="symlink"
        )
    data, _ = read_bytes(path, what="append-only file", root=root, limit=MAX_APPENDED_BYTES)
    cut = data.rfind(b"\n") + 1
    fragment = data[cut:]
    state = root / STATE_DIR
    target = _claim(state, Path(str(path.relative_to(state)) + ".torn"), now)
    target.write_bytes(fragment)
    with path.open("r+b") as handle:
        handle.truncate(cut)
        handle.flush()
        os.fsync(handle.fileno())
    return str(target.relative_to(root))
