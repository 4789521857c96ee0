"""The input domain: every number, id and time LoopX accepts, declared once.

The stored models are built from these types; the generated records check the same values
(`loopx_core.models.records.DOMAIN`, one kind per type below), and so do the CLI and the ops
entry points (which the MCP server calls too): the CLI, MCP and the files refuse the same
things. A number is finite and bounded, an id matches in full, a time lies in a range where
every date computation stays valid.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, AwareDatetime, Field, StringConstraints

from loopx_core.ids import ID_PATTERN, is_valid_id
from loopx_core.models import rules
from loopx_core.models.constants import (
    MAX_COUNT,
    MAX_MINUTES,
    MAX_SLOTS,
    MAX_STORED_TIME,
    MAX_TIME,
    MAX_WINDOW_HOURS,
    MIN_SLOT_MINUTES,
    MIN_TIME,
)


def _finite(**bounds: float) -> Any:
    return Field(allow_inf_nan=False, **bounds)


Compute = Annotated[float, _finite(ge=0.0, le=1.0)]
"""Share of the window's slots a goal may spend (0 pauses)."""
WindowHours = Annotated[float, _finite(gt=0.0, le=MAX_WINDOW_HOURS)]
"""Rolling quota window, in hours."""
SlotMinutes = Annotated[float, _finite(ge=MIN_SLOT_MINUTES, le=MAX_MINUTES)]
"""Minutes per quota slot."""
Minutes = Annotated[float, _finite(gt=0.0, le=MAX_MINUTES)]
"""A positive duration in minutes: a lease, a wait, a poll cadence."""
MinutesOrZero = Annotated[float, _finite(ge=0.0, le=MAX_MINUTES)]
"""A duration in minutes that may be zero: a cadence, a manual charge."""
Seconds = Annotated[float, _finite(ge=0.0, le=(MAX_TIME - MIN_TIME).total_seconds())]
"""A measured duration in seconds (any span inside the time range)."""
NoProgressLimit = Annotated[int, Field(ge=1, le=1000)]
"""No-progress turns in a row that open an operator gate."""
Priority = Annotated[int, Field(ge=0, le=9)]
"""0 runs first ... 9 runs last."""
Slots = Annotated[int, Field(ge=1, le=MAX_SLOTS)]
"""Slots one charge asks for."""
SlotCount = Annotated[int, Field(ge=0, le=MAX_SLOTS)]
"""Slots a ledger event carries (a void may carry 0)."""
Count = Annotated[int, Field(ge=0, le=MAX_COUNT)]
"""A counter: version, failures, unchanged polls, a file offset."""
Ordinal = Annotated[int, Field(ge=1, le=MAX_COUNT)]
"""A counter that starts at 1: ledger seq, next todo number."""


def _id(value: str) -> str:
    if not is_valid_id(value):
        raise ValueError("not a valid id (1-64 of a-z 0-9 . _ -, no '..')")
    return value


class Before:
    """A time's upper bound (exclusive), checked after pydantic parsed the time."""

    def __init__(self, end: Any) -> None:
        self.end = end

    def __call__(self, value: Any) -> Any:
        """`value` if it lies from 1970 to before `end`."""
        if not MIN_TIME <= value < self.end:
            raise ValueError(f"time out of range (from {MIN_TIME.year} to before {self.end.year})")
        return value


Id = Annotated[str, StringConstraints(pattern=ID_PATTERN), AfterValidator(_id)]
"""A goal, agent, todo, gate or event id (see `loopx_core.ids`): matched in full."""
InputTime = Annotated[AwareDatetime, AfterValidator(Before(MAX_TIME))]
"""A time given as input (an option, `LOOPX_NOW`): with a UTC offset, from 1970 to before 3000."""
Time = Annotated[AwareDatetime, AfterValidator(Before(MAX_STORED_TIME))]
"""A stored time: an input time, or one plus a bounded duration (before 3100)."""
JsonObject = Annotated[dict[str, Any], AfterValidator(rules.finite_json)]
"""A free-form JSON object kept in a file (a receipt, a host's result): any JSON, finite numbers only."""

NAMED = {
    "Compute": Compute,
    "WindowHours": WindowHours,
    "SlotMinutes": SlotMinutes,
    "Minutes": Minutes,
    "MinutesOrZero": MinutesOrZero,
    "Seconds": Seconds,
    "NoProgressLimit": NoProgressLimit,
    "Priority": Priority,
    "Slots": Slots,
    "SlotCount": SlotCount,
    "Count": Count,
    "Ordinal": Ordinal,
    "Id": Id,
    "InputTime": InputTime,
    "Time": Time,
}
"""Every domain type by name: the generated records have one kind of the same name for each."""

DOMAIN: tuple[tuple[str, str, str], ...] = (
    ("--compute", "Compute", "goal add, goal configure"),
    ("--window-hours", "WindowHours", "goal add, goal configure"),
    ("--slot-minutes", "SlotMinutes", "goal add, goal configure"),
    ("--min-interval-minutes", "MinutesOrZero", "goal add, goal configure"),
    ("--lease-minutes", "Minutes", "todo claim, turn begin; MCP todo_claim, turn_begin"),
    ("--for-minutes, --poll-every-minutes", "Minutes", "focus wait"),
    ("--minutes", "MinutesOrZero", "quota spend --manual"),
    ("--slots", "Slots", "quota spend, turn run-once"),
    ("--priority", "Priority", "todo add"),
    (
        "--goal-id, --agent-id, --todo-id, --gate-id, --event-id, --bound-agent, "
        "--blocks-agent, --exclude-agent, --fingerprint",
        "Id",
        "every command and MCP tool; every id in a state file",
    ),
    ("--until, LOOPX_NOW", "InputTime", "focus wait; the clock"),
)
"""Every numeric option and id with its domain type's name, as docs/cli.md lists them."""
