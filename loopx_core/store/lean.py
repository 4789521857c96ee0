"""Reading a stored file through the generated lean reader, with pydantic as the judge of doubt.

`loopx_core.models.lean` (generated from the pydantic models) recognises the documents LoopX
writes without importing pydantic. Whatever it is unsure of goes to the pydantic model: a
document pydantic accepts comes back as the same lean object, one it refuses raises exactly
the error `atomic.read_model` raises. So a lean read and a pydantic read accept and refuse the
same files with the same errors (tests/test_lean_readers.py), and only doubt costs pydantic.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from loopx_core.errors import NotFoundError, StateInvalidError
from loopx_core.models import lean

MODEL_MODULES = {
    "Registry": "loopx_core.models.registry",
    "GoalState": "loopx_core.models.goal",
    "LedgerEvent": "loopx_core.models.ledger",
    "TurnJournal": "loopx_core.models.journal",
    "SchedulerState": "loopx_core.models.scheduler",
}
"""The pydantic model behind each file a lean read may return."""


def shown(path: Path, root: Path | None) -> str:
    """`path` relative to the project root when inside it (as `atomic.shown`)."""
    if root is not None:
        try:
            return str(path.relative_to(root))
        except ValueError:
            pass
    return str(path)


def read_file(path: Path, name: str, *, what: str, root: Path | None = None) -> Any:
    """The lean object of the file at `path` (model `name`), or the error `read_model` gives."""
    where = shown(path, root)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise NotFoundError(f"{what} not found at {where}") from None
    except OSError as exc:
        raise StateInvalidError(f"{what} unreadable at {where}: {exc.strerror}", path=where) from None
    return parse(data, name, where=where, what=what)


def parse(data: bytes, name: str, *, where: str, what: str) -> Any:
    """`data` as a lean `name`; a doubt is settled by pydantic (its error, or its values)."""
    try:
        return lean.CHECKERS[name](lean.loads(data))
    except (lean.Doubt, ValueError, RecursionError):  # json's errors are ValueErrors
        pass
    return from_model(validated(data, name, where=where, what=what))


def validated(data: bytes, name: str, *, where: str, what: str) -> Any:
    """The pydantic model of `data`, or the `StateInvalidError` `read_model` raises for it."""
    from pydantic import ValidationError

    from loopx_core.store.atomic import explain

    model = getattr(importlib.import_module(MODEL_MODULES[name]), name)
    try:
        return model.model_validate_json(data)
    except ValidationError as exc:
        raise explain(where, data, what, exc) from None


def from_model(value: Any) -> Any:
    """A validated pydantic model (and what it holds) as its lean twin, field by field."""
    fields = getattr(type(value), "model_fields", None)
    if fields is not None:
        out = getattr(lean, type(value).__name__).__new__(getattr(lean, type(value).__name__))
        for field in fields:
            object.__setattr__(out, field, from_model(getattr(value, field)))
        return out
    if isinstance(value, list):
        return [from_model(v) for v in value]
    if isinstance(value, dict):
        return {k: from_model(v) for k, v in value.items()}
    return value
