"""Time: one injectable clock so packets and snapshots are reproducible.

`LOOPX_NOW` (an ISO-8601 time with offset) freezes "now" for tests and demos.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime

from loopx_core.errors import UsageError


def parse_time(text: str) -> datetime:
    """Parse an ISO-8601 time; a time without an offset is refused, `Z` means UTC."""
    try:
        value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"invalid time {text!r}: use ISO-8601, e.g. 2026-11-29T12:00:00Z") from None
    if value.tzinfo is None:
        raise UsageError(f"time {text!r} has no UTC offset: add Z or +HH:MM")
    return value.astimezone(UTC)


def now() -> datetime:
    """The current UTC time, or `LOOPX_NOW` when set."""
    frozen = os.environ.get("LOOPX_NOW")
    if frozen:
        return parse_time(frozen)
    return datetime.now(UTC)


def iso(value: datetime) -> str:
    """Format a time as compact UTC ISO-8601 (`2026-11-29T12:00:00Z`)."""
    text = value.astimezone(UTC).isoformat()
    return text.replace("+00:00", "Z")
