"""A lean read transport: libpq itself through `_ctypes`, for a tick that must not import psycopg.

psycopg (its `__init__` alone pulls its C extension, asyncio, logging, typing machinery)
costs a tick on the team store about 100 ms here; `_ctypes` (`cdata`) under 0.5 ms. The library
loaded is the one psycopg itself would use (`library_path`), so every DSN means what it means
to psycopg: libpq parses it, reads PG* variables, service and password files, negotiates SSL.

Only what a tick's reads need: connect, run a statement with text parameters, read text
results. Anything this module is unsure of (no library, a connection or statement error, a
client encoding other than UTF8, a column type or parameter it does not know) is `Doubt`,
and the caller asks psycopg instead, so every error a user sees stays psycopg's.
`ctypes.util.find_library` is never used: it runs subprocesses.
"""

from __future__ import annotations

import os
import sys

from loopx_core.store.postgres import cdata, libc
from loopx_core.store.postgres.common import (
    LEAN_CONNECT_TIMEOUT_S,
    LEAN_LIBPQ_OPTIONS,
    installed,
)
from loopx_core.store.postgres.lean_protocol import Doubt, Failed, Outcome, numbered, param, reader

__all__ = ["Doubt", "Failed", "LeanConnection", "Outcome", "begin", "conninfo", "library", "numbered"]

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on a tick
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

c_char_pp = cdata.POINTER(cdata.c_char_p)
CONNECTION_OK = 0
CONNECTION_BAD = 1
POLLING_FAILED, POLLING_READING, POLLING_WRITING, POLLING_OK = 0, 1, 2, 3
PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_FATAL_ERROR = 1, 2, 7
PGRES_COPY = frozenset((3, 4, 8))  # COPY_OUT, COPY_IN, COPY_BOTH
TRANS_IDLE = 0
DIAG_SQLSTATE, DIAG_MESSAGE_PRIMARY = ord("C"), ord("M")


class _Option(cdata.Structure):
    """libpq's `PQconninfoOption`."""

    _fields_ = (
        ("keyword", cdata.c_char_p),
        ("envvar", cdata.c_char_p),
        ("compiled", cdata.c_char_p),
        ("val", cdata.c_char_p),
        ("label", cdata.c_char_p),
        ("dispchar", cdata.c_char_p),
        ("dispsize", cdata.c_int),
    )


def library_path() -> str | None:
    """The libpq psycopg would load here, found without importing psycopg (None: not sure which).

    psycopg takes the implementation `PSYCOPG_IMPL` names, else the first installed of
    `psycopg_c` (linked to the system libpq), `psycopg_binary` (the libpq bundled beside it in
    `psycopg_binary.libs`) and its pure-Python one (the system libpq).
    """
    dirs = [entry for entry in sys.path if entry and os.path.isdir(entry)]
    if not installed("psycopg"):
        return None
    impl = os.environ.get("PSYCOPG_IMPL") or (
        "c" if installed("psycopg_c") else "binary" if installed("psycopg_binary") else "python"
    )
    if impl == "binary":
        for d in dirs:
            libs = os.path.join(d, "psycopg_binary.libs")
            if os.path.isdir(os.path.join(d, "psycopg_binary")) and os.path.isdir(libs):
                found = sorted(n for n in os.listdir(libs) if n.startswith("libpq-") and ".so" in n)
                return os.path.join(libs, found[0]) if found else None
        return None
    if (impl == "python" or (impl == "c" and installed("psycopg_c"))) and sys.platform.startswith("linux"):
        return "libpq.so.5"
    return None  # another platform's library name, or an implementation psycopg would refuse


_LIB: list[Any] = []


def library() -> Any:
    """libpq, loaded once with the prototypes used here; `Doubt` when it cannot be loaded."""
    if _LIB:
        if _LIB[0] is None:
            raise Doubt("libpq is not loadable")
        return _LIB[0]
    path = library_path()
    try:
        if path is None:
            raise OSError("no libpq")
        lib = libc.open_lazily(path)
        _prototypes(lib)
    except (OSError, AttributeError):
        _LIB.append(None)
        raise Doubt("libpq is not loadable") from None
    _LIB.append(lib)
    return lib


_NOTICES = cdata.callback_type(None, cdata.c_void_p, cdata.c_char_p)
_SILENT = _NOTICES(lambda arg, message: None)
"""The notice processor: libpq's own prints a server's notices and warnings to stderr, where
psycopg's path (a notice receiver with no handler) prints nothing."""


def _prototypes(lib: Any) -> None:
    p, i, s = cdata.c_void_p, cdata.c_int, cdata.c_char_p
    for name in ("PQsslInUse", "PQgssEncInUse"):  # optional: an older libpq lacks one, nothing else
        function = getattr(lib, name, None)
        if function is not None:
            function.restype, function.argtypes = i, [p]
    for name, restype, argtypes in (
        ("PQconnectStartParams", p, [c_char_pp, c_char_pp, i]),
        ("PQconnectPoll", i, [p]),
        ("PQsocket", i, [p]),
        ("PQstatus", i, [p]),
        ("PQparameterStatus", s, [p, s]),
        ("PQsendQueryParams", i, [p, s, i, p, c_char_pp, p, p, i]),
        ("PQsendQuery", i, [p, s]),
        ("PQgetResult", p, [p]),
        ("PQcmdStatus", s, [p]),
        ("PQcmdTuples", s, [p]),
        ("PQresultErrorField", s, [p, i]),
        ("PQerrorMessage", s, [p]),
        ("PQtransactionStatus", i, [p]),
        ("PQresultStatus", i, [p]),
        ("PQntuples", i, [p]),
        ("PQnfields", i, [p]),
        ("PQftype", cdata.c_uint, [p, i]),
        ("PQgetvalue", s, [p, i, i]),
        ("PQgetisnull", i, [p, i, i]),
        ("PQclear", None, [p]),
        ("PQfinish", None, [p]),
        ("PQconninfoParse", cdata.POINTER(_Option), [s, c_char_pp]),
        ("PQconninfoFree", None, [cdata.POINTER(_Option)]),
        ("PQfreemem", None, [p]),
        ("PQsetNoticeProcessor", p, [p, _NOTICES, p]),
    ):
        function = getattr(lib, name)
        function.restype, function.argtypes = restype, argtypes


def _strings(values: Sequence[bytes | None]) -> Any:
    return (cdata.c_char_p * (len(values) + 1))(*values, None)


def conninfo(dsn: str) -> dict[str, str]:
    """The DSN's libpq parameters that are set, as psycopg's `conninfo_to_dict` gives them.

    `Doubt` for anything else (no libpq, a NUL byte, a DSN libpq refuses, bytes that are not
    UTF-8): psycopg's parser then says what is wrong, as it always did.
    """
    lib = library()
    if "\x00" in dsn:
        raise Doubt("a NUL byte")
    error = cdata.c_char_p()
    try:
        options = lib.PQconninfoParse(dsn.encode(), cdata.byref(error))
    except UnicodeError:
        raise Doubt("not encodable") from None
    if not options:
        if error.value is not None:
            lib.PQfreemem(error)
        raise Doubt("refused by libpq")
    try:
        params: dict[str, str] = {}
        n = 0
        while options[n].keyword is not None:
            if options[n].val is not None:
                params[options[n].keyword.decode()] = options[n].val.decode()
            n += 1
        return params
    except UnicodeError:
        raise Doubt("not UTF-8") from None
    finally:
        lib.PQconninfoFree(options)


class LeanConnection:
    """One libpq connection in autocommit, opened with the options psycopg's path gives it.

    The connection starts without waiting (libpq's `PQconnectStartParams`, the startup packet
    sent at once): the server authenticates and prepares its backend while this process goes
    on, and the first statement finishes the handshake (`PQconnectPoll`), waiting at most
    `timeout` seconds from the start, as libpq's `connect_timeout` would.
    """

    def __init__(
        self,
        dsn: str,
        options: dict[str, str],
        *,
        timeout: float = 2.0,
        on_ready: Callable[[LeanConnection], None] | None = None,
    ) -> None:
        lib = library()
        if "\x00" in dsn or any("\x00" in v for v in options.values()):
            raise Doubt("a NUL byte")
        try:
            pairs = [(b"dbname", dsn.encode())] + [(k.encode(), v.encode()) for k, v in options.items()]
        except UnicodeError:
            raise Doubt("not encodable") from None
        from time import monotonic

        self._deadline = monotonic() + timeout
        self._lib = lib
        self._ready = False
        self.on_ready = on_ready
        """Told once the session is up (`LeanLink.adopt` sets it)."""
        # expand_dbname: the DSN is expanded in place, so the options after it win (as psycopg's do)
        self._conn = lib.PQconnectStartParams(
            _strings([k for k, _ in pairs]), _strings([v for _, v in pairs]), 1
        )
        if not self._conn:
            raise Doubt("out of memory")
        lib.PQsetNoticeProcessor(self._conn, _SILENT, None)  # before any statement, as psycopg's receiver
        if lib.PQstatus(self._conn) == CONNECTION_BAD:
            self.close()
            raise Doubt("not connected")
        self._state = POLLING_WRITING  # as libpq's documentation says to begin
        self._advance(0.0)  # the startup packet goes now, if the socket takes it without waiting

    def _advance(self, wait: float | None) -> bool:
        """Poll the handshake on (each step after waiting up to `wait` s for the socket; None: till
        the deadline); True once connected, False when it would wait longer, `Doubt` on failure."""
        from time import monotonic

        lib, conn = self._lib, self._conn
        while self._state != POLLING_OK:
            if self._state == POLLING_FAILED:
                self.close()
                raise Doubt("not connected")
            left = self._deadline - monotonic() if wait is None else wait
            if left <= 0 and wait is None:
                self.close()
                raise Doubt("timed out connecting")
            sock = lib.PQsocket(conn)
            if sock < 0:
                self.close()
                raise Doubt("no socket")
            ready = libc.wait(sock, self._state == POLLING_READING, max(left, 0.0))
            if ready < 0:
                self.close()
                raise Doubt("cannot wait for the server")
            if ready == 0:
                if wait is not None:
                    return False
                continue  # the deadline decides
            self._state = lib.PQconnectPoll(conn)
        return True

    def _connected(self) -> None:
        """Finish the handshake (waiting as long as the deadline allows) and check the session."""
        if self._ready:
            return
        if self._conn is None:
            raise Doubt("closed")
        self._advance(None)
        if self._lib.PQstatus(self._conn) != CONNECTION_OK or self._encoding() != b"UTF8":
            self.close()
            raise Doubt("not connected")
        self._ready = True
        if self.on_ready is not None:
            self.on_ready(self)

    def encrypted(self) -> bool:
        """True when the session runs over TLS or GSS encryption (or libpq cannot say)."""
        conn = self._conn
        if conn is None:
            return False
        found = [getattr(self._lib, name, None) for name in ("PQsslInUse", "PQgssEncInUse")]
        if any(function is None for function in found):
            return True  # an older libpq: assume the worst
        return any(function(conn) for function in found)

    def _encoding(self) -> bytes | None:
        return self._lib.PQparameterStatus(self._conn, b"client_encoding")  # type: ignore[no-any-return]

    def rows(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        """The statement's rows, each value as psycopg would give it (text, int, bool or None);
        `Doubt` when it fails in any way."""
        try:
            return self.execute(sql, params).rows
        except Failed:
            raise Doubt("the statement failed") from None

    def execute(self, sql: str, params: tuple[Any, ...] = (), *, simple: bool = False) -> Outcome:
        """Run one statement (with `simple`, a parameterless script of several, as psycopg runs
        `BEGIN; SET LOCAL ...`): its rows and command status; `Failed` when the server (or the
        connection) says no, `Doubt` when this module cannot say what happened."""
        self._connected()
        lib, conn = self._lib, self._conn
        if simple:
            if params or "\x00" in sql:
                raise Doubt("a script with parameters")
            sent = lib.PQsendQuery(conn, sql.encode())
        else:
            values = [param(v) for v in params]
            command = numbered(sql)
            sent = lib.PQsendQueryParams(conn, command, len(values), None, _strings(values), None, None, 0)
        result = self._result() if sent else None
        if not result:
            raise self._failure(None)
        try:
            status = lib.PQresultStatus(result)
            if status == PGRES_FATAL_ERROR:
                raise self._failure(result)
            if status not in (PGRES_TUPLES_OK, PGRES_COMMAND_OK):
                raise Doubt(f"a result of status {status}")
            rows = self._rows(result) if status == PGRES_TUPLES_OK else []
            tuples = lib.PQcmdTuples(result) or b""
            return Outcome(rows, (lib.PQcmdStatus(result) or b"").decode(), int(tuples) if tuples else -1)
        except (UnicodeError, ValueError):  # a value not as its type says: psycopg would say what
            raise Doubt("an unreadable value") from None
        finally:
            lib.PQclear(result)

    def _result(self) -> Any:
        """The statement's result as psycopg takes it: its first error if any (a FATAL one keeps its
        SQLSTATE, where `PQexec` would give the bare loss that follows it), else the last; None
        when there is none. Every other result is cleared."""
        lib, conn = self._lib, self._conn
        kept = None
        while True:
            result = lib.PQgetResult(conn)
            if not result:
                return kept
            status = lib.PQresultStatus(result)
            if kept is not None and lib.PQresultStatus(kept) == PGRES_FATAL_ERROR:
                lib.PQclear(result)
            else:
                if kept is not None:
                    lib.PQclear(kept)
                kept = result
            if status in PGRES_COPY or lib.PQstatus(conn) == CONNECTION_BAD:
                return kept  # as `PQexec`: a COPY waits on this side, a broken session has no more

    def _rows(self, result: Any) -> list[tuple[Any, ...]]:
        """Every row, each value read by its column's type: one call into libpq per value
        (`PQgetvalue` gives the text up to its NUL, and a text result holds none; only an empty
        value asks whether it is NULL), so a window of a thousand ledger rows reads quickly."""
        lib = self._lib
        fields = lib.PQnfields(result)
        readers = [reader(lib.PQftype(result, col)) for col in range(fields)]
        value, isnull, rows = lib.PQgetvalue, lib.PQgetisnull, range(lib.PQntuples(result))
        if fields == 1:
            read = readers[0]
            return [
                (None if not raw and isnull(result, row, 0) else read(raw),)
                for row in rows
                for raw in (value(result, row, 0),)
            ]
        out = []
        for row in rows:
            values = []
            for col in range(fields):
                raw = value(result, row, col)
                values.append(None if not raw and isnull(result, row, col) else readers[col](raw))
            out.append(tuple(values))
        return out

    def _failure(self, result: Any) -> Failed | Doubt:
        """What a failed statement was: the server's SQLSTATE and message, or a lost connection."""
        lib, conn = self._lib, self._conn
        lost = lib.PQstatus(conn) != CONNECTION_OK
        state = lib.PQresultErrorField(result, DIAG_SQLSTATE) if result else None
        message = lib.PQresultErrorField(result, DIAG_MESSAGE_PRIMARY) if result else None
        if not message:
            message = lib.PQerrorMessage(conn)
        text = (message or b"").decode("utf-8", "replace")
        if state is None and not lost:
            return Doubt("a failure without a SQLSTATE")
        return Failed(state.decode("ascii", "replace") if state else None, text, lost=lost)

    @property
    def in_transaction(self) -> bool:
        """True when the session is inside a transaction block (or its state is unknown)."""
        if self._conn is None or not self._ready:
            return False
        return self._lib.PQtransactionStatus(self._conn) != TRANS_IDLE  # type: ignore[no-any-return]

    def close(self) -> None:
        """Close the connection (again: nothing)."""
        conn, self._conn = self._conn, None
        if conn:
            self._lib.PQfinish(conn)


def begin(dsn: str) -> LeanConnection:
    """A connection to `dsn` begun without waiting, with the options psycopg's path gives it
    and the lean transport's short connect timeout; `Doubt` when unsure."""
    options = LEAN_LIBPQ_OPTIONS
    return LeanConnection(dsn, options, timeout=LEAN_CONNECT_TIMEOUT_S)
