"""Reading a stored file through the generated lean reader, with pydantic as the judge of doubt.

`loopx_core.models.lean` (generated from the pydantic models) recognises the documents LoopX
writes without importing pydantic. Whatever it is unsure of goes to the pydantic model: a
document pydantic accepts comes back as the same lean object, one it refuses raises exactly
the error `atomic.read_model` raises. So a lean read and a pydantic read accept and refuse the
same files with the same errors (tests/test_lean_readers.py), and only doubt costs pydantic.
"""

from __future__ import annotations

import os
from itertools import islice

from loopx_core.errors import NotFoundError, StateInvalidError
from loopx_core.frozen_re import compile as _compile
from loopx_core.ids import check_id
from loopx_core.models import lean
from loopx_core.store.atomic import explain, read_bytes, shown
from loopx_core.store.ledger import reverse_lines

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    import re
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

    from loopx_core.datetimes import datetime

MODEL_MODULES = {
    "Registry": "loopx_core.models.registry",
    "GoalState": "loopx_core.models.goal",
    "LedgerEvent": "loopx_core.models.ledger",
    "TurnJournal": "loopx_core.models.journal",
    "SchedulerState": "loopx_core.models.scheduler",
    "RunIndexEntry": "loopx_core.models.runs",
    "StoreConfig": "loopx_core.store.config",
}
"""The pydantic model behind each file a lean read may return."""


def read_file(path: Path, name: str, *, what: str, root: Path | None = None) -> Any:
    """The lean object of the file at `path` (model `name`), or the error `read_model` gives."""
    data, where = read_bytes(path, what=what, root=root)
    return parse(data, name, where=where, what=what)


def parse(data: bytes, name: str, *, where: str, what: str) -> Any:
    """`data` as a lean `name`; a doubt is settled by pydantic (its error, or its values)."""
    if name in lean.LINE_FORMS:
        found = canonical_line(data, name)
        if found is not None:
            return found
    return _parse_document(data, name, where=where, what=what)


def parse_all(texts: list[str], name: str, *, where: str, what: str) -> list[Any]:
    """Each text (decoded UTF-8) as a lean `name`, as `parse` answers and refuses it, the line
    form's lookups made once (a PostgreSQL ledger window is a thousand rows)."""
    if name not in lean.LINE_FORMS:
        return [parse(text.encode(), name, where=where, what=what) for text in texts]
    fullmatch, build = _line_form(name)
    out = []
    for text in texts:
        found = None
        try:  # `canonical_line`, written out
            match = fullmatch(text)
            if match is not None:
                found = build(match.groups())
        except lean.Doubt:
            pass
        out.append(
            found if found is not None else _parse_document(text.encode(), name, where=where, what=what)
        )
    return out


def _parse_document(data: bytes, name: str, *, where: str, what: str) -> Any:
    """`data` as a lean `name` through the general reader (JSON, then the checker; pydantic on doubt)."""
    try:
        return lean.CHECKERS[name](lean.loads(data))
    except (lean.Doubt, ValueError, RecursionError):  # json's errors are ValueErrors
        pass
    return from_model(validated(data, name, where=where, what=what))


_LINE_PATTERNS: dict[str, re.Pattern[str]] = {}


def parse_event(path: Path | str, line: bytes, root: Path | str | None) -> Any:
    """One ledger line as a lean `LedgerEvent`: `ledger.parse_event`'s answer and errors, leaner."""
    return parse(line, "LedgerEvent", where=shown(path, root), what="a line of the ledger")


def _line_form(name: str) -> tuple[Callable[[str], Any], Callable[[tuple[Any, ...]], Any]]:
    """The compiled regex's `fullmatch` and the builder of `name`'s canonical line (compiled once)."""
    pattern, build = lean.LINE_FORMS[name]
    compiled = _LINE_PATTERNS.get(name) or _LINE_PATTERNS.setdefault(name, _compile(pattern))
    return compiled.fullmatch, build


def canonical_line(data: bytes, name: str) -> Any | None:
    """`data` as a lean `name` when it is a line exactly as LoopX writes it, else None.

    One regex (`lean.LINE_FORMS`, generated from the model) matches the canonical line and
    decides the strings, ids and literals itself; the generated builder runs the field's lean
    check on numbers and times. Anything else (or any doubt) is None: the general reader decides.
    """
    fullmatch, build = _line_form(name)
    try:
        match = fullmatch(data.decode("utf-8"))
        return None if match is None else build(match.groups())
    except (lean.Doubt, UnicodeDecodeError):
        return None


def validated(data: bytes, name: str, *, where: str, what: str) -> Any:
    """The pydantic model of `data`, or the `StateInvalidError` `read_model` raises for it."""
    from importlib import import_module  # the importlib package loads warnings: only on doubt

    from pydantic import ValidationError

    model = getattr(import_module(MODEL_MODULES[name]), name)
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


class LeanFileStore:
    """The reads of a `FileStore` that a tick (and a host's hooks) make, through the lean readers.

    Same files, same paths (the wrapped store's), same errors; only the parsing differs, and
    any doubt is settled by pydantic. Read-only: it offers nothing a tick does not read.
    """

    label = "files"
    """The store as packets name it (the wrapped store's)."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.root: Path | str = store.root
        """The wrapped store's root: a `Path` (a `FileStore`), or a string (a `FileLayout`)."""

    def read_registry(self) -> Any:
        """The registry (lean), as `FileStore.read_registry` accepts or refuses it."""
        self.store._require_init()
        return read_file(self.store.registry_path, "Registry", what="registry", root=self.root)

    def read_goal(self, goal_id: str) -> Any:
        """A goal's state (lean), as `FileStore.read_goal` accepts or refuses it."""
        path = self.store.goal_path(goal_id)
        try:
            return read_file(path, "GoalState", what=f"state of goal {goal_id!r}", root=self.root)
        except (NotFoundError, StateInvalidError):
            self.store._require_init()  # a `.loopx` that is a file, or holds no registry: that is what is wrong
            raise

    def read_journal(self, goal_id: str, turn_key: str) -> Any:
        """A turn journal (lean), as `FileStore.read_journal` accepts or refuses it."""
        path = self.store.turn_path(goal_id, turn_key)
        return read_file(path, "TurnJournal", what="turn journal", root=self.root)

    def read_scheduler(self, goal_id: str) -> Any:
        """The goal's scheduler state (lean; empty if no host reported yet)."""
        try:
            path = self.store.scheduler_path(goal_id)
            return read_file(path, "SchedulerState", what="scheduler state", root=self.root)
        except NotFoundError:
            return lean.CHECKERS["SchedulerState"]({"schema_version": 1, "goal_id": goal_id})

    def ledger_since(self, goal_id: str, since: datetime) -> list[Any]:
        """Ledger events (lean) at or after `since`, oldest first, reading only the file's tail."""
        path = self.store.ledger_path(goal_id)
        where = shown(path, self.root)
        events: list[Any] = []
        fullmatch, build = _line_form("LedgerEvent")  # `parse`, its lookups made once for the window
        for line in reverse_lines(path, root=self.root, what="ledger"):
            event = None
            try:  # `canonical_line`, written out: a window is a thousand lines
                found = fullmatch(line.decode("utf-8"))
                if found is not None:
                    event = build(found.groups())
            except (lean.Doubt, UnicodeDecodeError):
                pass
            if event is None:
                event = _parse_document(line, "LedgerEvent", where=where, what="a line of the ledger")
            if event.at < since:
                break
            events.append(event)
        events.reverse()
        return events

    def read_history(self, goal_id: str, *, last: int | None = None) -> list[Any]:
        """The run history (lean; only its `last` lines if given), oldest first, as `FileStore` reads it."""
        path = os.path.join(self.store.runs_dir(check_id("goal", goal_id)), "index.jsonl")
        lines = list(islice(reverse_lines(path, root=self.root, what="run history"), last))
        lines.reverse()
        where = shown(path, self.root)
        return [parse(line, "RunIndexEntry", where=where, what="a line of the run history") for line in lines]


def for_reading(store: Any) -> Any:
    """`store` for a tick's reads: a file store through the lean readers, another store through
    its own `lean_reads()` if it has one (PostgreSQL's), any other as it is."""
    if isinstance(store, LeanFileStore):
        return store
    if store.label == "files":
        return LeanFileStore(store)
    lean_reads = getattr(store, "lean_reads", None)
    return store if lean_reads is None else lean_reads()
