"""The models' constants that the hot path needs without the models: the schema version, bounds, turn phases.

Pure standard library (no pydantic), so `loopx quota should-run` can check `LOOPX_NOW`, cap a
charge and order a turn's phases without building a model. `models.domain` and
`models.journal` define their types from these names; this is their one definition.
"""

from __future__ import annotations

from loopx_core.datetimes import UTC, datetime

SCHEMA_VERSION = 1
"""The one schema version this release reads and writes."""
MAX_MINUTES = 3 * 365 * 24 * 60
"""Longest lease, wait, cadence or charge: three years (1,576,800 minutes)."""
MAX_WINDOW_HOURS = 10 * 365 * 24
"""Longest quota window: ten years (87,600 hours)."""
MIN_SLOT_MINUTES = 0.01
"""Shortest quota slot (0.6 s), so a window never holds more than ~5e8 slots."""
MAX_SLOTS = 10**9
"""Most slots one charge (or one ledger event) may carry."""
MAX_COUNT = 2**53 - 1
"""Largest counter (versions, sequence numbers): exact in every JSON reader."""
MIN_TIME = datetime(1970, 1, 1, tzinfo=UTC)
"""Earliest time accepted (inclusive)."""
MAX_TIME = datetime(3000, 1, 1, tzinfo=UTC)
"""Latest time given (exclusive): far enough from datetime's limits for any window."""
MAX_STORED_TIME = datetime(3100, 1, 1, tzinfo=UTC)
"""Latest time stored (exclusive): a given time plus the longest lease, wait or window."""

PHASES: tuple[str, ...] = (
    "host_execute",
    "typed_result",
    "validation",
    "durable_writeback",
    "quota_spend",
    "terminal_closeout",
)
"""A turn's phases, in the order a journal records them."""
STATUSES: tuple[str, ...] = ("open", "committed", "stopped", "failed")
"""Every status a turn journal may have."""
TOMBSTONES = ("committed", "stopped", "failed")
"""Journal statuses kept as read-only tombstones."""
