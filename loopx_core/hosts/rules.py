"""The host registry's rules: `LOOPX_PLUGINS`, a host's shape, calls into plugins."""

from __future__ import annotations

import os

from loopx_core.errors import LoopxError, UsageError
from loopx_core.hosts.host import Host
from loopx_core.hosts.model import CORE_BASES, Base, is_base_name

from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from types import TracebackType
    from typing import Any

PLUGINS_ENV = "LOOPX_PLUGINS"


def selection() -> tuple[list[str], list[str]]:
    """`LOOPX_PLUGINS` as (selected, blocked) entry-point names; both empty: every plugin loads."""
    raw = [p.strip() for p in os.environ.get(PLUGINS_ENV, "").split(",") if p.strip()]
    blocked = [p[1:] for p in raw if p.startswith("-")]
    selected = [p for p in raw if not p.startswith("-")]
    return selected, blocked


def _pairs(value: Any) -> bool:
    return isinstance(value, tuple | list) and all(
        isinstance(pair, tuple | list) and len(pair) == 2 and all(isinstance(v, str) for v in pair)
        for pair in value
    )


def shape_problem(h: Host) -> str | None:
    """What is not of the declared types (the conformance kit checks the values)."""
    if not isinstance(h.name, str) or not h.name or not isinstance(h.title, str):
        return "name or title is not text"
    if not _pairs(h.cases):
        return "cases are not (scope, layout) pairs"
    if not isinstance(h.bases, tuple | list) or not all(isinstance(b, Base) for b in h.bases):
        return "bases are not Base folders"
    if not isinstance(h.events, tuple | list) or not all(isinstance(e, str) for e in h.events):
        return "events are not names"
    return None


def check_bases(found: dict[str, Host]) -> None:
    """Refuse a base no host may declare (a core name, not snake_case) or one two hosts declare."""
    owner: dict[str, str] = {}
    for name, h in found.items():
        for base in h.bases:
            if not is_base_name(base.name) or base.name in CORE_BASES:
                raise UsageError(
                    f"host {name!r} declares the base {base.name[:40]!r}: use another snake_case name"
                )
            if owner.setdefault(base.name, name) != name:
                raise UsageError(f"the base {base.name!r} is declared by both {owner[base.name]} and {name}")


def merge_hints(h: Host, packet: dict[str, Any]) -> None:
    """Merge host `h`'s hints for a should-run packet into `packet["scheduler_hint"][its key]`."""
    with plugin_call(h.name, "hints"):
        hints = h.hints(packet)
        if hints is not None and not isinstance(hints, dict):
            raise TypeError(f"hints() returned {type(hints).__name__}, not a dict")
    if hints:
        packet["scheduler_hint"].setdefault(h.name.replace("-", "_"), {}).update(hints)


class plugin_call:
    """Around a call into plugin code: a host's refusal (ValueError) is a usage error (exit 2), any
    other exception a plugin failure (exit 1), one line either way; LoopX's own errors pass."""

    def __init__(self, who: str, what: str) -> None:
        self.who = who
        self.what = what

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, trace: TracebackType | None
    ) -> bool:
        if exc is None or isinstance(exc, LoopxError) or not isinstance(exc, Exception):
            return False
        if isinstance(exc, ValueError):
            raise UsageError(f"{self.who}: {str(exc)[:200]}") from None
        # a bug in a plugin must not end in a traceback
        raise LoopxError(
            f"{self.who} failed in {self.what}: {type(exc).__name__}: {str(exc)[:160]}", code="plugin_failed"
        ) from None
