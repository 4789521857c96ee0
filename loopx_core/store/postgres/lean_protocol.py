"""What both lean transports share (libpq through `_ctypes`, and the wire protocol over a unix
socket): their doubts and failures, a statement's outcome, parameters as text and values read
by their column's type, each as psycopg's path gives or takes it."""

from __future__ import annotations

from loopx_core.datetimes import datetime

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on a tick
if TYPE_CHECKING:
    from typing import Any

TEXT_OIDS = frozenset((25, 1043))  # text, varchar: the documents are read cast to ::text
INT_OIDS = frozenset((20, 21, 23))
BOOL_OID = 16
VOID_OID = 2278  # what pg_advisory_xact_lock returns
INT64 = 1 << 63
_COUNTED = (b"SELECT ", b"DELETE ", b"UPDATE ", b"MERGE ", b"FETCH ", b"MOVE ", b"COPY ")


class Doubt(Exception):
    """The lean transport cannot answer this for sure: ask psycopg (or libpq, for the wire's)."""


class Failed(Exception):
    """The server refused a statement (its SQLSTATE and primary message), or the connection
    broke under it (`lost`; then the SQLSTATE may be None), as psycopg's error would say."""

    def __init__(self, sqlstate: str | None, message: str, *, lost: bool) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate
        self.message = message
        self.lost = lost


class Outcome:
    """A statement's rows, command status (`UPDATE 1`, `COMMIT`, `ROLLBACK`) and row count
    (-1 where the command has none), as a psycopg cursor gives them."""

    __slots__ = ("rowcount", "rows", "status")

    def __init__(self, rows: list[tuple[Any, ...]], status: str, rowcount: int) -> None:
        self.rows, self.status, self.rowcount = rows, status, rowcount


def param(value: Any) -> bytes | None:
    """A statement parameter as text (the server infers its type from where it stands)."""
    if value is None:
        return None
    if isinstance(value, str):
        if "\x00" in value:
            raise Doubt("a NUL byte in a parameter")
        return value.encode()
    if type(value) is int and -INT64 <= value < INT64:
        return str(value).encode()
    if type(value) is datetime:
        return value.isoformat().encode()
    raise Doubt(f"a parameter of type {type(value).__name__}")


def numbered(sql: str) -> bytes:
    """psycopg's `%s` placeholders as libpq's `$1`, `$2`, ... (a statement with any other `%`: `Doubt`)."""
    parts = sql.split("%s")
    if any("%" in part for part in parts):
        raise Doubt("a statement with a literal %")
    out = parts[0]
    for n, part in enumerate(parts[1:], start=1):
        out += f"${n}{part}"
    return out.encode()


def counted(tag: bytes) -> int:
    """The rows a command tag counts (`UPDATE 3`: 3; `INSERT 0 2`: 2), -1 where it counts none,
    as libpq's `PQcmdTuples` and then psycopg's `rowcount` read it."""
    if tag.startswith(b"INSERT "):
        digits = tag[7:].partition(b" ")[2]  # after the OID (none without its space)
    else:
        prefix = next((p for p in _COUNTED if tag.startswith(p)), None)
        if prefix is None:
            return -1
        digits = tag[len(prefix) :]
    return int(digits) if digits.isdigit() else -1  # bytes.isdigit: ASCII digits, at least one


def reader(oid: int) -> Any:
    """How a text value of the column type `oid` is read; `Doubt` for a type not known here."""
    if oid in TEXT_OIDS:
        return bytes.decode
    if oid in INT_OIDS:
        return int
    if oid == BOOL_OID:
        return _true
    if oid == VOID_OID:
        return _none
    raise Doubt(f"a column of type {oid}")


def _true(raw: bytes) -> bool:
    return raw == b"t"


def _none(raw: bytes) -> None:
    return None
