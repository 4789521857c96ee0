"""The datetime types LoopX uses, from CPython's C module `_datetime` directly.

`import datetime` first runs the whole pure-Python `datetime.py` (about 2,600 lines) and then
replaces its classes with `_datetime`'s: about 1.3 ms of every process's start-up, each
heartbeat's too. The classes here are those very objects (`datetime.datetime is
loopx_core.datetimes.datetime`), so values mix freely with any module that imports `datetime`.
"""

from __future__ import annotations

try:
    from _datetime import UTC, datetime, timedelta, timezone
except ImportError:  # pragma: no cover - an interpreter without the C module
    from datetime import UTC, datetime, timedelta, timezone

__all__ = ["UTC", "datetime", "timedelta", "timezone"]
