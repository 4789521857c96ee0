"""`LeanSettlePostgresStore`: the team store of the settlement commands, in lean objects.

The PostgreSQL twin of `store.lean_store.LeanSettleStore`: the same rows, statements,
transactions and errors as `PostgresStore` (it is one), but its reads give the objects of
`loopx_core.models.lean` (the generated readers; pydantic judges any doubt) and its writes
take them, so a settlement command on the team store loads neither psycopg (its writes go
through `lean_session`) nor pydantic. Every document is written as `encode_compact` gives it:
the lean writer's compact JSON once the generated checker reads it back as valid, otherwise
pydantic validates the record (refusing it with its own error) and its `model_dump_json()`
is written, so a row is always the bytes `PostgresStore` would write
(tests/test_postgres_lean_writes.py compares whole turns).
"""

from __future__ import annotations

import os

from loopx_core.models import lean
from loopx_core.models.twins import judged
from loopx_core.store import lean_encode
from loopx_core.store.postgres.store import PostgresStore

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on a settlement command
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

_DOUBTS = (lean.Doubt, ValueError, TypeError, AttributeError, KeyError, RecursionError)
"""What the lean writer or checker may raise on a record it cannot answer for (json's errors
are ValueErrors; a foreign object has no writer, a pydantic model no checker)."""


def encode_compact(record: Any) -> str:
    """A document's row (lean, or a pydantic model): pydantic's `model_dump_json()`, always."""
    try:
        data = lean.dump_compact(record)
        lean.CHECKERS[type(record).__name__](lean.loads(data))
        return data.decode()
    except _DOUBTS:
        pass
    return judged(record).model_dump_json()  # type: ignore[no-any-return]


def encode_event(event: Any) -> str:
    """A ledger row's body: the file store's ledger line (`store.lean_encode.encode_event`)."""
    return lean_encode.encode_event(event).decode()


def encode_history(entry: Any) -> str:
    """A history row's entry: the file store's history line (`store.lean_encode.encode_history`)."""
    return lean_encode.encode_history(entry).decode()


class LeanSettlePostgresStore(PostgresStore):
    """A `PostgresStore` whose reads give lean objects and whose writes take them (same rows)."""

    models: Any = lean
    """New records are lean objects: `store.models.TurnJournal(...)` builds the lean twin."""
    _lean_docs = True
    _path: Path | None = None

    @property  # type: ignore[override]
    def root(self) -> Path:
        """The project folder as a `Path`, made on first use: given a string, a settlement
        command loads no pathlib (~2.5 ms with urllib and ipaddress) unless it asks for it."""
        if self._path is None:
            from pathlib import Path

            self._path = Path(self._base)
        return self._path

    @root.setter
    def root(self, value: Path | str) -> None:
        self._base = os.fspath(value)
        self._path = None if isinstance(value, str) else value

    @property
    def root_text(self) -> str:
        """The project folder as a string, without making its `Path`."""
        return self._base

    def _json(self, record: Any) -> str:
        """A document's row, as `encode_compact` gives it."""
        return encode_compact(record)

    def _event_line(self, event: Any) -> str:
        """A ledger row's body, as `encode_event` gives it."""
        return encode_event(event)

    def _history_line(self, entry: Any) -> str:
        """A history row's entry, as `encode_history` gives it."""
        return encode_history(entry)
