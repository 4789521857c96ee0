"""Delivery: send each due notice to each sink, retry a failure with backoff, give up at last.

One flusher at a time (the `notices-flush` lock, never waited for: a second flusher leaves
the work to the first). The lock is held for a pass over the outbox only, never while a
lingering flusher waits for a retry, so a new notice to a healthy sink goes at once. A failed
send is retried after 5 s, 10 s, 20 s ... up to an hour, for `MAX_ATTEMPTS` attempts; then the delivery is `failed` and `loopx doctor` reports it
(`--repair` re-arms it). With `linger`, the flusher waits for retries falling due within that
many seconds (the detached flush after a queue lingers so a brief outage heals unattended).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from loopx_core.clock import now as clock_now
from loopx_core.errors import LockTimeoutError
from loopx_core.models.records import OutboxRecord, SinkConfig
from loopx_core.notices import outbox
from loopx_core.notices.config import all_sinks
from loopx_core.notices.sinks import SinkError, SinkKinds, _scrub

BACKOFF_BASE_S = 5.0
BACKOFF_FACTOR = 2.0
BACKOFF_CAP_S = 3600.0
MAX_ATTEMPTS = 12
"""Attempts before a delivery is given up (about four hours of retries)."""


def backoff_seconds(attempts: int) -> float:
    """The wait after the `attempts`-th failure: 5 s doubling, at most an hour."""
    return min(BACKOFF_CAP_S, BACKOFF_BASE_S * BACKOFF_FACTOR ** max(0, attempts - 1))


@dataclass
class FlushReport:
    """What one flush did."""

    delivered: list[dict[str, str]] = field(default_factory=list)
    retrying: list[dict[str, str]] = field(default_factory=list)
    gave_up: list[dict[str, str]] = field(default_factory=list)
    pending: int = 0
    busy: bool = False
    """True when another flusher held the lock (it does the work)."""

    def to_json(self) -> dict[str, object]:
        """The report as JSON data."""
        return {
            "delivered": self.delivered,
            "retrying": self.retrying,
            "gave_up": self.gave_up,
            "pending": self.pending,
            "busy": self.busy,
        }


def send_one(kinds: SinkKinds, sink: SinkConfig, record: OutboxRecord, root: Path) -> str | None:
    """Deliver to one sink: None, or the failure as one line without secrets."""
    try:
        kinds.for_url(sink.url).send(sink.url, record.notice, root)
    except SinkError as exc:
        return _scrub(str(exc), sink.url) or "delivery failed"
    except Exception as exc:  # a plugin's or a library's failure is a failed attempt, not a crash
        return _scrub(f"{type(exc).__name__}: {exc}", sink.url)
    return None


def deliver_due(
    root: Path, kinds: SinkKinds, report: FlushReport, clock: Callable[[], datetime] = clock_now
) -> datetime | None:
    """One pass over the outbox: send what is due; the next retry's time, or None if nothing waits."""
    sinks = {s.sink_id: s for s in all_sinks(root)}
    upcoming: datetime | None = None
    report.pending = 0
    for _path, record in outbox.records(root):
        if record is None or not record.pending:
            continue
        changed = False
        for sink_id, delivery in record.deliveries.items():
            if delivery.status != "pending":
                continue
            at = clock()
            if delivery.next_attempt_at is not None and delivery.next_attempt_at > at:
                upcoming = min(upcoming or delivery.next_attempt_at, delivery.next_attempt_at)
                continue
            sink = sinks.get(sink_id)
            error = "the sink was removed" if sink is None else send_one(kinds, sink, record, root)
            delivery.attempts += 1
            changed = True
            entry = {"notice_id": record.notice.notice_id, "kind": record.notice.kind, "sink_id": sink_id}
            if error is None:
                delivery.status, delivery.delivered_at, delivery.last_error = "delivered", clock(), None
                delivery.next_attempt_at = None
                report.delivered.append(entry)
                continue
            delivery.last_error = error
            if sink is None or delivery.attempts >= MAX_ATTEMPTS:
                delivery.status, delivery.next_attempt_at = "failed", None
                report.gave_up.append({**entry, "error": error})
                continue
            delivery.next_attempt_at = clock() + timedelta(seconds=backoff_seconds(delivery.attempts))
            upcoming = min(upcoming or delivery.next_attempt_at, delivery.next_attempt_at)
            report.retrying.append({**entry, "error": error})
        if changed:
            outbox.write(root, record)
        report.pending += record.pending
    return upcoming


def flush(
    root: Path,
    kinds: SinkKinds,
    *,
    linger: float = 0.0,
    clock: Callable[[], datetime] = clock_now,
    sleep: Callable[[float], None] = time.sleep,
) -> FlushReport:
    """Deliver everything due; with `linger`, also the retries due within that many seconds."""
    from loopx_core.store.lock import file_lock

    report = FlushReport()
    deadline = time.monotonic() + max(0.0, linger)
    frozen = bool(os.environ.get("LOOPX_NOW"))  # a frozen clock never brings a retry due
    rechecks = 0
    while True:
        try:
            with file_lock(outbox.lock_file(root), timeout=0):
                upcoming = deliver_due(root, kinds, report, clock)
        except LockTimeoutError:
            report.busy = True
            return report
        wait = None if upcoming is None or frozen else (upcoming - clock()).total_seconds()
        if wait is not None and time.monotonic() + wait <= deadline:
            # waited out without the lock: a notice queued meanwhile is sent by its own flusher
            sleep(max(0.01, wait))
            continue
        if rechecks < 2 and _due_now(root, clock):  # a queue may have raced the lock's release
            rechecks += 1
            continue
        return report


def _due_now(root: Path, clock: Callable[[], datetime]) -> bool:
    at = clock()
    for _path, record in outbox.records(root):
        if record is None:
            continue
        for d in record.deliveries.values():
            if d.status == "pending" and (d.next_attempt_at is None or d.next_attempt_at <= at):
                return True
    return False
