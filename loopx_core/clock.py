"""Time: one injectable clock so packets and snapshots are reproducible.

`LOOPX_NOW` (an ISO-8601 time with offset) freezes "now" for tests and demos. Every time
LoopX reads (options, `LOOPX_NOW`, files) lies in the domain's range (`schema.domain.Time`).
"""

from __future__ import annotations

import os
from datetime import UTC, datetime

from loopx_core.errors import UsageError
from loopx_core.ids import shown_value
from loopx_core.models.record import Invalid
from loopx_core.models.records import InputTime


def parse_time(text: str, *, what: str = "time") -> datetime:
    """Parse an ISO-8601 time in the domain's range; no offset is refused, `Z` means UTC."""
    try:
        value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(
            f"invalid {what} {shown_value(text)}: use ISO-8601, e.g. 2026-11-29T12:00:00Z"
        ) from None
    if value.tzinfo is None:
        raise UsageError(f"{what} {shown_value(text)} has no UTC offset: add Z or +HH:MM")
    try:
        return InputTime.load(value).astimezone(UTC)
    except Invalid:
        raise UsageError(f"invalid {what} {shown_value(text)}: must be {InputTime.describe()}") from None


def now() -> datetime:
    """The current UTC time, or `LOOPX_NOW` when set (a bad value is a usage error, exit 2)."""
    frozen = os.environ.get("LOOPX_NOW")
    if frozen:
        return parse_time(frozen, what="LOOPX_NOW")
    return datetime.now(UTC)


def iso(value: datetime) -> str:
    """Format a time as compact UTC ISO-8601 (`2026-11-29T12:00:00Z`)."""
    text = value.astimezone(UTC).isoformat()
    return text.replace("+00:00", "Z")
