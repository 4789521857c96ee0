"""The outbox: `.loopx/notices/events/<notice_id>.json`, one record per notice, written once.

`queue` creates a record with `os.link` from a temporary file, so two processes queueing the
same notice (same stable id) make one record, never two; only the flusher (one at a time,
under the `notices-flush` lock) rewrites a record, atomically, as deliveries progress.
Delivered records stay, so a notice queued again later is still recognised and not resent.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from loopx_core.errors import LoopxError
from loopx_core.models import codec
from loopx_core.models.records import Delivery, Notice, OutboxRecord
from loopx_core.notices.presence import notices_dir
from loopx_core.store.atomic import atomic_write_bytes, read_bytes

FLUSH_LOCK = "notices-flush"


def events_dir(root: Path) -> Path:
    """`.loopx/notices/events/`."""
    return notices_dir(root) / "events"


def record_path(root: Path, notice_id: str) -> Path:
    """The outbox record of one notice."""
    return events_dir(root) / f"{notice_id}.json"


def _encode(record: OutboxRecord) -> bytes:
    return codec.document(record, exclude_none=True)


def queue(root: Path, notice: Notice, sink_ids: list[str]) -> bool:
    """Queue `notice` for `sink_ids`; False (nothing written) when it was queued before."""
    path = record_path(root, notice.notice_id)
    if path.exists():
        return False
    record = OutboxRecord(
        schema_version=1, notice=notice, deliveries={s: Delivery(next_attempt_at=notice.at) for s in sink_ids}
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".queue.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(_encode(record))
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(tmp, path)  # exclusive: a second queue of the same id fails here
        except FileExistsError:
            return False
    finally:
        Path(tmp).unlink(missing_ok=True)
    return True


def write(root: Path, record: OutboxRecord) -> None:
    """Rewrite a record atomically (the flusher only)."""
    atomic_write_bytes(record_path(root, record.notice.notice_id), _encode(record))


def read(path: Path) -> OutboxRecord | None:
    """One record, or None when it is unreadable or of another schema (doctor reports those)."""
    try:  # read_bytes: a FIFO or a device standing there is refused at once, never read
        data, where = read_bytes(path, what="outbox record")
        return codec.parse(data, OutboxRecord, what="outbox record", where=where)
    except (LoopxError, OSError):
        return None


def paths(root: Path) -> list[Path]:
    """Every record file, oldest name first."""
    folder = events_dir(root)
    with contextlib.suppress(FileNotFoundError, NotADirectoryError):
        return sorted(p for p in folder.iterdir() if p.suffix == ".json" and not p.name.startswith("."))
    return []


def records(root: Path) -> Iterator[tuple[Path, OutboxRecord | None]]:
    """Every record (None for a damaged one), with its file."""
    for path in paths(root):
        yield path, read(path)


def lock_file(root: Path) -> Path:
    """The flusher's lock file."""
    return root / ".loopx" / "locks" / f"{FLUSH_LOCK}.lock"
