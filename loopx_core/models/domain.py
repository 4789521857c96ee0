"""The input domain: every number, id and time LoopX accepts, defined once.

The stored models are built from these types, and the CLI and the ops entry points (which
the MCP server calls too) check their arguments against the same types with `check`, so
the CLI, MCP and the files refuse the same things: a number is finite and bounded, an id
matches in full, a time lies in a range where every date computation stays valid.
"""

from __future__ import annotations

from functools import cache
from typing import Annotated, Any, TypeVar, get_args

from annotated_types import Ge, Gt, Le
from pydantic import AfterValidator, AwareDatetime, Field, StringConstraints, TypeAdapter, ValidationError

from loopx_core.datetimes import datetime
from loopx_core.errors import UsageError
from loopx_core.ids import ID_PATTERN, is_valid_id, shown_value
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
from loopx_core.models.plugin_loader import install

install()  # before any validator is built: the plugin loader without importlib.metadata when it can be

T = TypeVar("T")


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
"""A counter: version, failures, unchanged polls."""
Ordinal = Annotated[int, Field(ge=1, le=MAX_COUNT)]
"""A counter that starts at 1: ledger seq, next todo number."""


def _id(value: str) -> str:
    if not is_valid_id(value):
        raise ValueError("not a valid id (1-64 of a-z 0-9 . _ -, no '..')")
    return value


def _time_before(end: datetime) -> Any:
    def within(value: datetime) -> datetime:
        if not MIN_TIME <= value < end:
            raise ValueError(f"time out of range (from {MIN_TIME.year} to before {end.year})")
        return value

    return AfterValidator(within)


Id = Annotated[str, StringConstraints(pattern=ID_PATTERN), AfterValidator(_id)]
"""A goal, agent, todo, gate or event id (see `loopx_core.ids`): matched in full."""
InputTime = Annotated[AwareDatetime, _time_before(MAX_TIME)]
"""A time given as input (an option, `LOOPX_NOW`): with a UTC offset, from 1970 to before 3000."""
Time = Annotated[AwareDatetime, _time_before(MAX_STORED_TIME)]
"""A stored time: an input time, or one plus a bounded duration (before 3100)."""


def finite_json(value: T) -> T:
    """`value` (free-form JSON), refused if it holds NaN or an infinity anywhere.

    They are not JSON (RFC 8259): LoopX never writes one (a rewrite would store `null`,
    silently changing the file) and never prints one (`cli.output.dumps` refuses it).
    """
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float) and item - item != 0:
            raise ValueError("NaN and infinities are not JSON")
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return value


JsonObject = Annotated[dict[str, Any], AfterValidator(finite_json)]
"""A free-form JSON object kept in a file (a receipt, a host's result): any JSON, finite numbers only."""

DOMAIN: tuple[tuple[str, Any, str], ...] = (
    ("--compute", Compute, "goal add, goal configure"),
    ("--window-hours", WindowHours, "goal add, goal configure"),
    ("--slot-minutes", SlotMinutes, "goal add, goal configure"),
    ("--min-interval-minutes", MinutesOrZero, "goal add, goal configure"),
    ("--lease-minutes", Minutes, "todo claim, turn begin; MCP todo_claim, turn_begin"),
    ("--for-minutes, --poll-every-minutes", Minutes, "focus wait"),
    ("--minutes", MinutesOrZero, "quota spend --manual"),
    ("--slots", Slots, "quota spend, turn run-once"),
    ("--priority", Priority, "todo add"),
    (
        "--goal-id, --agent-id, --todo-id, --gate-id, --event-id, --bound-agent, "
        "--blocks-agent, --exclude-agent, --fingerprint",
        Id,
        "every command and MCP tool; every id in a state file",
    ),
    ("--until, LOOPX_NOW", InputTime, "focus wait; the clock"),
)
"""Every numeric option and id with its domain, as docs/cli.md lists them."""


@cache
def _adapter(domain: Any) -> TypeAdapter[Any]:
    return TypeAdapter(domain)


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def describe(domain: Any) -> str:
    """The domain in words, e.g. `a finite number > 0 and <= 1576800`."""
    if domain is Id:
        return "1-64 of a-z 0-9 . _ - (lower case, starting with a letter or digit, no '..'), matched in full"
    if domain in (InputTime, Time):
        end = MAX_TIME if domain is InputTime else MAX_STORED_TIME
        return f"an ISO-8601 time with a UTC offset, from {MIN_TIME.year} to before {end.year}"
    base, *metadata = get_args(domain)
    limits: list[str] = []
    for item in metadata:
        for bound in getattr(item, "metadata", [item]):
            if isinstance(bound, Ge):
                limits.append(f">= {_number(bound.ge)}")
            elif isinstance(bound, Gt):
                limits.append(f"> {_number(bound.gt)}")
            elif isinstance(bound, Le):
                limits.append(f"<= {_number(bound.le)}")
    kind = "a whole number" if base is int else "a finite number"
    return f"{kind} {' and '.join(limits)}".strip()


def check(option: str, domain: Any, value: T) -> T:
    """`value` (as the domain reads it) if it lies in `domain`, else a one-line `UsageError`."""
    try:
        return _adapter(domain).validate_python(value)  # type: ignore[no-any-return]
    except ValidationError:
        shown = shown_value(value.isoformat() if isinstance(value, datetime) else value)
        raise UsageError(f"invalid {option} {shown}: must be {describe(domain)}") from None


def check_optional(option: str, domain: Any, value: T | None) -> T | None:
    """`check` for an optional value: None passes."""
    return None if value is None else check(option, domain, value)
