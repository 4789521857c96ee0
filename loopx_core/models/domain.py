"""The input domain at run time: a value given on the command line or to an MCP tool, checked
by the same kind its stored field has (`records.DOMAIN`, one per `schema.domain` type)."""

from __future__ import annotations

from datetime import datetime
from typing import TypeVar

from loopx_core.errors import UsageError
from loopx_core.ids import shown_value
from loopx_core.models.record import Invalid, Kind
from loopx_core.models.records import DOMAIN

T = TypeVar("T")


def describe(domain: str | Kind) -> str:
    """The domain (a type's name, e.g. `Minutes`, or its kind) in words."""
    return (DOMAIN[domain] if isinstance(domain, str) else domain).describe()


def check(option: str, domain: str | Kind, value: T) -> T:
    """`value` as the domain (a type's name, or its kind) reads it, else a one-line `UsageError`
    naming `option`."""
    kind = DOMAIN[domain] if isinstance(domain, str) else domain
    try:
        return kind.load(value)  # type: ignore[no-any-return]
    except Invalid:
        shown = shown_value(value.isoformat() if isinstance(value, datetime) else value)
        raise UsageError(f"invalid {option} {shown}: must be {kind.describe()}") from None


def check_optional(option: str, domain: str | Kind, value: T | None) -> T | None:
    """`check` for an optional value: None passes."""
    return None if value is None else check(option, domain, value)
