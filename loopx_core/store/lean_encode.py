"""How the settlement stores encode a lean object for its file or row: pydantic's bytes, always.

`encode` (a stored document), `encode_event` (a ledger line) and `encode_history` (a run
history line): the generated lean writer's output once the generated checker reads it back,
else pydantic judges the record (validates it and writes its own dump, or raises its
`ValidationError`). A pydantic model passes straight to its own dump. Used by the file
store's (`store.lean_store`) and the team store's (`store.postgres.lean_store`) settlement
twins; tests/adversarial/test_lean_store_encode.py proves them on generated records.
"""

from __future__ import annotations

from loopx_core import jsontext
from loopx_core.models import lean
from loopx_core.models.twins import judged
from loopx_core.store import lean as lean_reads

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from typing import Any


def encode(record: Any) -> bytes:
    """The file `record` (lean, or a pydantic model) is written as: pydantic's bytes, always.

    The lean writer's JSON when the generated checker reads it back as a valid document;
    otherwise pydantic validates the record (refusing it with its own error) and writes it.
    """
    name = type(record).__name__
    try:
        data = lean.dumps(record)
        lean.CHECKERS[name](lean.loads(data))
        return data + b"\n"
    except (lean.Doubt, ValueError, TypeError, AttributeError, KeyError, RecursionError):
        pass  # json's errors are ValueErrors; a foreign object has no writer, a model no checker
    return judged(record).model_dump_json(indent=2).encode() + b"\n"  # type: ignore[no-any-return]


def encode_event(event: Any) -> bytes:
    """A ledger line (no newline): `model_dump_json(exclude_none=True)` of the event's twin."""
    try:
        data = lean.dump_line(event)
        if lean_reads.canonical_line(data, "LedgerEvent") is not None:
            return data  # type: ignore[no-any-return]
        lean.CHECKERS["LedgerEvent"](lean.loads(data))
        return data  # type: ignore[no-any-return]
    except (lean.Doubt, ValueError, TypeError, AttributeError, RecursionError):
        pass
    return judged(event).model_dump_json(exclude_none=True).encode()  # type: ignore[no-any-return]


def encode_history(entry: Any) -> bytes:
    """A run history line (no newline): the entry's `model_dump(mode="json")`, compact JSON."""
    try:
        data = lean.to_json(entry)
        line = jsontext.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()
        lean.CHECKERS["RunIndexEntry"](lean.loads(line))
        return line
    except (lean.Doubt, ValueError, TypeError, AttributeError, RecursionError):
        pass
    data = judged(entry).model_dump(mode="json")
    return jsontext.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()
