"""The schema's constants: the schema version, the domain's bounds, a turn's phases.

`loopx_core.schema` declares its types from these names and the generated records check
them; this is their one definition.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

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

GateKind = Literal["owner", "no_progress"]
"""Why a gate is open: the owner's own gate, or LoopX's escalation of a loop that advanced nothing."""
TodoStatus = Literal["open", "claimed", "done", "blocked", "deferred"]
"""Where a todo stands."""
Progress = Literal["todo_worked", "todos_added", "none"]
"""What a settled turn advanced; `none` counts towards the goal's no-progress limit."""
NoticeKind = Literal[
    "gate_opened",
    "ask_owner",
    "blocked_health",
    "no_progress",
    "stalled",
    "goal_done",
    "long_throttle",
    "test",
]
"""What a notice tells the owner."""
EVENT_KINDS: tuple[str, ...] = (
    "gate_opened",
    "ask_owner",
    "blocked_health",
    "no_progress",
    "stalled",
    "goal_done",
    "long_throttle",
)
"""The events a sink may subscribe to (`test` is only ever sent by `loopx notify test`)."""
