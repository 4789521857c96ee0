"""Records to and from the bytes LoopX stores: the one reader and the one writer of every file.

A file store's file and a team store's row hold the same JSON: `parse` reads it (JSON first,
then the schema version, then every field), `document` and `line` write it. A document that
is not JSON, not of this release's schema, or not the record is refused with one line naming
where and why (exit 4, or 8 for another schema version); nothing is ever read quietly.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, TypeVar

from loopx_core.errors import SchemaUnsupportedError, StateInvalidError
from loopx_core.models.constants import SCHEMA_VERSION
from loopx_core.models.record import Invalid, Record

if TYPE_CHECKING:
    R = TypeVar("R", bound=Record)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def loads(data: bytes | str) -> Any:
    """JSON as RFC 8259 has it: `NaN` and `Infinity` refused (a `ValueError`, as any bad JSON)."""
    return json.loads(data, parse_constant=_refuse_constant)


def version_shown(version: object) -> str:
    """A file's `schema_version` in words for a refusal: its number or text, else what it is."""
    if version is None:
        return "no schema_version"
    if isinstance(version, bool) or not isinstance(version, int | float | str):
        kind = (
            "true or false"
            if isinstance(version, bool)
            else "an object"
            if isinstance(version, dict)
            else "a list"
        )
        return f"a schema_version that is {kind}"
    return f"schema_version {json.dumps(version)[:40]}"


def unsupported(what: str, where: str, version: object) -> SchemaUnsupportedError:
    """The refusal of a file (or line) of another schema version: never read, never rewritten."""
    return SchemaUnsupportedError(
        f"{what} at {where} has {version_shown(version)}; this loopx reads {SCHEMA_VERSION} "
        "(file left unchanged)",
        path=where,
    )


def parse_json(data: bytes | str, *, what: str, where: str) -> Any:
    """`data` as JSON, or the `StateInvalidError` that says it is not. `NaN` and `Infinity` are read
    as numbers here, so the record's kind refuses them naming the field they stand in."""
    try:
        return json.loads(data)
    except RecursionError:
        raise StateInvalidError(
            f"{what} at {where} is nested too deeply to be a LoopX file", path=where
        ) from None
    except ValueError as bad:  # json's errors, and bytes that are not UTF-8
        empty = not (data.strip() if isinstance(data, bytes | str) else data)
        hint = " (empty)" if empty else " (truncated?)" if "Expecting" in str(bad) else ""
        raise StateInvalidError(f"{what} at {where} is not valid JSON{hint}: {bad}", path=where) from None


def parse(data: bytes | str, cls: type[R], *, what: str, where: str) -> R:
    """`data` (a file, a line or a row) as a record of `cls`, or the error that says why not."""
    return load(parse_json(data, what=what, where=where), cls, what=what, where=where)


def load(raw: Any, cls: type[R], *, what: str, where: str) -> R:
    """Parsed JSON as a record of `cls`: another schema version is `SchemaUnsupportedError`, any
    other mismatch `StateInvalidError`, each naming the first field that is wrong."""
    if "schema_version" in cls.FIELDS:
        version = raw.get("schema_version") if isinstance(raw, dict) else None
        if version != SCHEMA_VERSION:
            raise unsupported(what, where, version)
    try:
        return cls.load(raw)
    except Invalid as error:
        raise StateInvalidError(
            f"{what} at {where} is invalid at {error.location}: {error.reason}", path=where
        ) from None


def document(record: Record, *, exclude_none: bool = False) -> bytes:
    """The file a record is written as: indented JSON and a newline."""
    data = record.dump(exclude_none=exclude_none)
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode()


def line(record: Record, *, exclude_none: bool = False) -> bytes:
    """One line of an append-only file (no newline), or a team store's row: compact JSON."""
    return json.dumps(
        record.dump(exclude_none=exclude_none), ensure_ascii=False, separators=(",", ":")
    ).encode()
