"""What ops and settlement ask of a record, the same for a pydantic model and its lean twin.

A settlement command reads and writes lean objects (`loopx_core.models.lean`, generated from
the pydantic models), every other caller pydantic models. Code that serves both builds new
records through its store (`models(store).TurnJournal(...)`), checks an input against its
domain by name (`check("--lease-minutes", "Minutes", value)`) and dumps through `to_json`,
so it imports no pydantic until a value is in doubt.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from typing import Any, TypeVar

    T = TypeVar("T")


_HOMES = {"TurnJournal": "journal", "PhaseRecord": "journal", "RunIndexEntry": "runs"}
"""Models `loopx_core.models` does not name, by their module under it."""


class _Pydantic:
    """The pydantic models by name, each loaded on first use (a store without `models`)."""

    def __getattr__(self, name: str) -> Any:
        home = _HOMES.get(name)
        if home is None:
            import loopx_core.models as package

            return getattr(package, name)
        __import__(f"loopx_core.models.{home}")
        import sys

        return getattr(sys.modules[f"loopx_core.models.{home}"], name)


PYDANTIC = _Pydantic()
"""The pydantic model classes, by the names the lean module gives their twins."""


def models(store: Any) -> Any:
    """The namespace `store` builds records with: its `models`, else the pydantic models."""
    found = getattr(store, "models", None)
    return PYDANTIC if found is None else found


def check(option: str, domain: str, value: T) -> T:
    """`value` as the input domain `domain` (a name in `models.domain`) reads it, else a `UsageError`.

    The generated lean check answers when it is sure; any doubt goes to pydantic's
    `domain.check`, which gives the same value or its one-line error.
    """
    from loopx_core.models import lean

    lean_check = getattr(lean, "DOMAINS", {}).get(domain)
    if lean_check is not None:
        try:
            return lean_check(value)  # type: ignore[no-any-return]
        except lean.Doubt:
            pass
    from loopx_core.models import domain as domains

    return domains.check(option, getattr(domains, domain), value)


def check_optional(option: str, domain: str, value: T | None) -> T | None:
    """`check` for an optional value: None passes."""
    return None if value is None else check(option, domain, value)


def to_json(record: Any, *, exclude_none: bool = False) -> dict[str, Any]:
    """`record` as JSON data: pydantic's `model_dump(mode="json")` of it or of its lean twin."""
    dump = getattr(record, "model_dump", None)
    if dump is not None:
        return dump(mode="json", exclude_none=exclude_none)  # type: ignore[no-any-return]
    from loopx_core.models import lean

    return lean.to_json(record, exclude_none=exclude_none)  # type: ignore[no-any-return]
