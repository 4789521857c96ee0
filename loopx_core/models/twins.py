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


def models(store: Any) -> Any:
    """The namespace `store` builds records with: its `models`, else the pydantic models
    (the `loopx_core.models` package, which loads a model's module on first use)."""
    found = getattr(store, "models", None)
    if found is not None:
        return found
    import loopx_core.models as pydantic_models

    return pydantic_models


def check(option: str, domain: str, value: T) -> T:
    """`value` as the input domain `domain` (a name in `models.domain`) reads it, else a `UsageError`.

    The generated lean check answers when it is sure; any doubt goes to pydantic's
    `domain.check`, which gives the same value or its one-line error.
    """
    from loopx_core.models import lean

    try:
        return lean.DOMAINS[domain](value)  # type: ignore[no-any-return]
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

    try:
        return lean.to_json(record, exclude_none=exclude_none)  # type: ignore[no-any-return]
    except lean.Doubt:  # a value the lean writer is unsure of: pydantic judges its twin
        return judged(record).model_dump(mode="json", exclude_none=exclude_none)  # type: ignore[no-any-return]


def judged(record: Any) -> Any:
    """`record` as a validated pydantic model: itself if it is one, else its lean values validated
    by its twin (pydantic's `ValidationError` if it refuses them). What a doubt is judged by."""
    if hasattr(record, "model_dump_json"):
        return record
    from loopx_core.models import lean

    return pydantic_twin(record).model_validate(lean.dump(record))


def pydantic_twin(record: Any) -> Any:
    """The pydantic model class of a lean `record` (its module loaded now: pydantic too)."""
    import sys

    from loopx_core.models import lean

    name = type(record).__name__
    module = lean.TWINS[name]
    __import__(module)
    return getattr(sys.modules[module], name)


def replaced(record: Any, **changes: Any) -> Any:
    """A copy of `record` with `changes` (unvalidated, as pydantic's `model_copy(update=...)`)."""
    copy = getattr(record, "model_copy", None)
    if copy is not None:
        return copy(update=changes)
    cls = type(record)
    out = cls.__new__(cls)
    for name in cls.__slots__:
        object.__setattr__(out, name, changes[name] if name in changes else getattr(record, name))
    return out
