"""The lean transport over a unix socket, speaking PostgreSQL's protocol (version 3.0) itself.

Loading libpq costs a tick about 2 ms here (its own relocations and OpenSSL's, Kerberos',
LDAP's), and `_ctypes` as much again; a local server on a unix socket needs none of it: no
TLS (libpq never asks for it on a unix socket), and with `trust` or `peer` authentication no
password. So where the DSN is one `conninfo` parses for sure, names one socket folder, and no
`PG*` variable is set (libpq reads those: a service, a password file, startup options), the
connection is made here, with the startup parameters libpq would send; everything else is
libpq's (`libpq.LeanConnection`), and a server that asks for what is not spoken here (a
password, another protocol version) is handed to libpq at once. Statements go as the
extended protocol's Parse, Bind, Describe, Execute and Sync, as libpq's `PQexecParams` sends
them; a script goes as one simple query, as `PQexec` sends it; each outcome, failure and
transaction state is read as libpq reports it, and any other message is `Doubt`.
"""

from __future__ import annotations

import _socket
import os

from loopx_core.store.postgres import conninfo
from loopx_core.store.postgres.common import (
    LEAN_CONNECT_TIMEOUT_S,
    LEAN_LIBPQ_OPTIONS,
    LIBPQ_OPTIONS,
    installed,
)
from loopx_core.store.postgres.lean_protocol import Doubt, Failed, Outcome, counted, numbered, param, reader

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on a tick
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from loopx_core.store.postgres.libpq import LeanConnection

WIRE_KEYS = conninfo.KEYS - {"hostaddr", "passfile", "service", "sslmode", "target_session_attrs"}
"""The DSN keys a wire connection honours: the store's own options win over `application_name`,
`client_encoding` and `connect_timeout`, as they do on libpq's path; a password is never sent
(a server that asks for one is libpq's); the keys left out change how libpq connects."""
PROTOCOL = (3 << 16).to_bytes(4, "big")
SYNC, TERMINATE = b"S\x00\x00\x00\x04", b"X\x00\x00\x00\x04"
LOST = "server closed the connection unexpectedly"
_FATAL = (b"FATAL", b"PANIC")


class Unspoken(Doubt):
    """The server asks for what this module does not speak (a password, another protocol): libpq's."""


def startup(dsn: str, environ: dict[str, str] | os._Environ[str] | None = None) -> tuple[str, bytes]:
    """The socket path and the startup packet libpq would send for `dsn` with the store's options;
    `Doubt` where this module is not sure of either."""
    environ = os.environ if environ is None else environ
    if any(name.startswith("PG") for name in environ):
        raise Doubt("a PG* variable: libpq's to read")
    if not installed("psycopg"):
        raise Doubt("no psycopg to settle a doubt")
    params = conninfo.parse(dsn)
    if not params.keys() <= WIRE_KEYS:
        raise Doubt("a key libpq's path honours")
    host, port = params.get("host", ""), params.get("port") or "5432"
    if not host.startswith("/") or "," in host:
        raise Doubt("not one unix socket folder")
    if not (port.isdigit() and port.isascii() and 0 < int(port) < 65536):
        raise Doubt("a port libpq would refuse")
    user = params.get("user") or _os_user()
    pairs = [("user", user), ("database", params.get("dbname") or user)]
    if params.get("options"):
        pairs.append(("options", params["options"]))
    pairs += [(key, LIBPQ_OPTIONS[key]) for key in ("application_name", "client_encoding")]
    body = PROTOCOL + b"".join(key.encode() + b"\x00" + value.encode() + b"\x00" for key, value in pairs)
    packet = (len(body) + 5).to_bytes(4, "big") + body + b"\x00"
    path = f"{host}/.s.PGSQL.{int(port)}"  # as libpq makes it (a trailing slash kept)
    if len(path.encode()) >= 108:  # libpq's limit (sizeof sun_path); the kernel's is a byte more
        raise Doubt("a socket path libpq refuses")
    return path, packet


def _os_user() -> str:
    """The effective user's name, as libpq takes it for a DSN without one."""
    import pwd

    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        raise Doubt("no name for this user") from None


class WireConnection:
    """One session on a local server's unix socket, in autocommit: `libpq.LeanConnection`'s calls.

    The startup packet is sent at once; the first statement reads the server's answer, within
    `timeout` seconds of the start. A server that asks for a password (or another protocol)
    is handed to a `libpq.LeanConnection` begun then, which serves every call after.
    """

    def __init__(self, dsn: str, *, timeout: float = LEAN_CONNECT_TIMEOUT_S) -> None:
        path, packet = startup(dsn)
        from time import monotonic

        self.dsn = dsn
        self._deadline = monotonic() + timeout
        self._libpq: LeanConnection | None = None
        self._ready = False
        self._lost = False
        self._status = b"I"
        self._busy = False  # a statement's answers are not all read (a signal cut the read short)
        self._buf = b""
        self._pos = 0
        self.on_ready: Callable[[Any], None] | None = None
        """Told once the session is up (`LeanLink.adopt` sets it)."""
        self._sock: Any = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            self._sock.settimeout(timeout)
            self._sock.connect(path)
            self._sock.sendall(packet)
        except (OSError, ValueError):  # no server there, a path too long, a full backlog
            self.close()
            raise Doubt("not connected") from None

    # -- the session --------------------------------------------------------------------
    def _connected(self) -> None:
        """Read the server's answer to the startup packet (authentication, parameters, ready)."""
        if self._ready or self._libpq is not None:
            return
        if self._sock is None:
            raise Doubt("closed")
        from time import monotonic

        try:
            encoding = None
            while True:
                left = self._deadline - monotonic()
                if left <= 0:
                    raise Doubt("timed out connecting")
                self._sock.settimeout(left)
                kind, body = self._message()
                if kind == b"R":
                    if body != b"\x00\x00\x00\x00":  # anything but AuthenticationOk
                        raise Unspoken("an authentication request")
                elif kind == b"S":
                    name, value, _ = body.split(b"\x00", 2)
                    if name == b"client_encoding":
                        encoding = value
                elif kind == b"Z":
                    self._status = body
                    break
                elif kind == b"v":
                    raise Unspoken("a protocol negotiation")
                elif kind not in (b"K", b"N"):  # an error (libpq's path reports it), or unknown
                    raise Doubt("not connected")
            if encoding != b"UTF8":
                raise Doubt("not connected")
            self._sock.settimeout(None)
        except Unspoken:
            self._hand_to_libpq(monotonic())
            return
        except (OSError, ValueError, Doubt) as error:
            self.close()
            raise error if isinstance(error, Doubt) else Doubt("not connected") from None
        self._ready = True
        if self.on_ready is not None:
            self.on_ready(self)

    def _hand_to_libpq(self, now: float) -> None:
        from loopx_core.store.postgres import libpq

        self.close()
        options = LEAN_LIBPQ_OPTIONS
        conn = libpq.LeanConnection(self.dsn, options, timeout=max(self._deadline - now, 0.0))
        conn.on_ready = lambda _: self.on_ready(self) if self.on_ready is not None else None
        self._libpq = conn
        conn._connected()

    def encrypted(self) -> bool:
        """True when the session runs over TLS or GSS (a unix socket never does; libpq's may say)."""
        return self._libpq.encrypted() if self._libpq is not None else False

    @property
    def in_transaction(self) -> bool:
        """True when the session is inside a transaction block (or its state is unknown)."""
        if self._libpq is not None:
            return self._libpq.in_transaction
        if not self._ready or self._sock is None:
            return False
        return self._lost or self._busy or self._status != b"I"

    def close(self) -> None:
        """Close the session (again: nothing)."""
        if self._libpq is not None:
            self._libpq.close()
        sock, self._sock = self._sock, None
        if sock is not None:
            if self._ready and not self._lost:
                try:  # noqa: SIM105  (contextlib is not imported on a tick)
                    sock.send(TERMINATE)  # as libpq's PQfinish: the server logs no lost client
                except OSError:
                    pass
            sock.close()

    # -- statements -----------------------------------------------------------------------
    def rows(self, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        """The statement's rows, each value as psycopg would give it; `Doubt` when it fails in any way."""
        try:
            return self.execute(sql, params).rows
        except Failed:
            raise Doubt("the statement failed") from None

    def execute(self, sql: str, params: tuple[Any, ...] = (), *, simple: bool = False) -> Outcome:
        """Run one statement (with `simple`, a parameterless script of several): its rows and
        command status; `Failed` when the server (or the connection) says no, `Doubt` when
        this module cannot say what happened."""
        self._connected()
        if self._libpq is not None:
            return self._libpq.execute(sql, params, simple=simple)
        if self._sock is None:
            raise Doubt("closed")
        if self._lost:
            raise Failed(None, "no connection to the server", lost=True)
        if simple:
            if params or "\x00" in sql:
                raise Doubt("a script with parameters")
            text = sql.encode() + b"\x00"
            if len(text) > 1 << 30:
                raise Doubt("more than a message holds")
            request = b"Q" + (len(text) + 4).to_bytes(4, "big") + text
        else:
            request = _extended(numbered(sql), [param(v) for v in params])
        if self._busy:
            self._skip()
        try:
            self._sock.sendall(request)
        except OSError:
            self._lost = True
            raise Failed(None, LOST, lost=True) from None
        except BaseException:  # a signal amid the request: the server waits for its rest
            self.close()
            raise
        self._busy = True
        return self._outcome()

    def _skip(self) -> None:
        """Read past what is left of an earlier statement's answers, as libpq's `PQexec` does."""
        while True:
            kind, body = self._answer()
            if kind == b"Z":
                self._status, self._busy = body, False
                return

    def _outcome(self) -> Outcome:
        """Read the answers up to ReadyForQuery: the last statement's outcome, or its failure.

        What cannot be read (a column type not known here, a value not as its type says, an
        empty query) is a `Doubt` raised once the answers are all read, so the session stays
        in step and usable, as libpq's; what the server would wait on (COPY) or what changes
        how text reads (the client encoding) closes the session first.
        """
        outcome: Outcome | None = None
        failure: Failed | None = None
        doubt: Exception | None = None
        readers: list[Any] = []
        rows: list[tuple[Any, ...]] = []
        while True:
            kind, body = self._answer()
            if kind == b"Z":
                self._status, self._busy = body, False
                break
            try:
                if kind == b"D":
                    if doubt is None:
                        rows.append(_row(body, readers))
                elif kind == b"T":
                    readers, rows = _readers(body), []
                    self._data(readers, rows)
                elif kind == b"C":
                    tag = body[:-1]
                    outcome, readers, rows = Outcome(rows, tag.decode(), counted(tag)), [], []
                elif kind == b"E":
                    failure = self._failure(body)
                elif kind == b"S":
                    name, value, _ = body.split(b"\x00", 2)
                    if name == b"client_encoding" and value != b"UTF8":
                        self.close()
                        raise Doubt("the client encoding changed")
                elif kind == b"I":
                    raise Doubt("an empty query")
                elif kind not in (b"1", b"2", b"n", b"N", b"A"):  # COPY, a suspended portal, unknown
                    self.close()
                    raise Doubt(f"a message of kind {kind!r}")
            except (ValueError, IndexError, Doubt) as error:  # UnicodeDecodeError is a ValueError
                if self._sock is None:
                    raise Doubt(str(error)) from None
                doubt = doubt or error
            except OSError:  # the socket ended amid the rows
                self._lost = True
                raise Failed(None, LOST, lost=True) from None
        if failure is not None:
            raise failure
        if doubt is not None or outcome is None:
            raise Doubt(f"an unreadable answer: {doubt}")
        return outcome

    def _failure(self, body: bytes) -> Failed:
        """An ErrorResponse as libpq reports it: its SQLSTATE and primary message; a FATAL one
        (the server ends the session after it) raised at once, as a lost connection."""
        fields = _fields(body)
        if b"C" not in fields:
            raise Doubt("a failure without a SQLSTATE")
        failure = Failed(fields[b"C"], fields.get(b"M", ""), lost=False)
        if fields.get(b"V", fields.get(b"S")) in _FATAL:
            self._lost = failure.lost = True
            raise failure
        return failure

    def _answer(self) -> tuple[bytes, bytes]:
        """The next message of a statement's answers; `Failed` (lost) when the socket ends."""
        try:
            return self._message()
        except OSError:
            self._lost = True
            raise Failed(None, LOST, lost=True) from None

    def _data(self, readers: list[Any], rows: list[tuple[Any, ...]]) -> None:
        """Read the DataRows that follow a RowDescription straight from the buffer (a window is a
        thousand of them: one call each would double its cost); stops at any other message."""
        buf, pos = self._buf, self._pos
        number = int.from_bytes
        single = readers[0] if len(readers) == 1 else None
        while True:
            count = len(buf)
            while pos + 5 <= count and buf[pos] == 68:  # "D"
                end = pos + 1 + number(buf[pos + 1 : pos + 5], "big")
                if end < pos + 5:  # a length no message has: `_message` says so
                    self._buf, self._pos = buf, pos
                    return
                if end > count:
                    break
                if single is not None:
                    size = number(buf[pos + 7 : pos + 11], "big", signed=True)
                    rows.append((None,) if size < 0 else (single(buf[pos + 11 : pos + 11 + size]),))
                else:
                    rows.append(_row(buf[pos + 5 : end], readers))
                pos = end
            self._buf, self._pos = buf, pos
            if pos < count and buf[pos] != 68:
                return  # another kind of message: the caller's
            buf, pos = self._more(buf, pos)  # the rest of a row, or the next (something comes: C, Z)

    def _message(self) -> tuple[bytes, bytes]:
        """The next message from the server: its kind and body (`OSError` when the socket ends)."""
        buf, pos = self._buf, self._pos
        while len(buf) - pos < 5:
            buf, pos = self._more(buf, pos)
        size = 1 + int.from_bytes(buf[pos + 1 : pos + 5], "big")
        if size < 5:
            raise OSError("lost synchronization with the server")  # as libpq: the session is broken
        while len(buf) - pos < size:
            buf, pos = self._more(buf, pos)
        end = pos + size
        self._buf, self._pos = buf, end
        return buf[pos : pos + 1], buf[pos + 5 : end]

    def _more(self, buf: bytes, pos: int) -> tuple[bytes, int]:
        """`buf` from `pos` on, with what the socket brings next, kept at once: a signal that cuts
        a later read short loses nothing already read (`_skip` goes on from here)."""
        chunk = self._sock.recv(262144)
        if not chunk:
            raise OSError(LOST)
        self._buf, self._pos = buf[pos:] + chunk, 0
        return self._buf, 0


def _extended(command: bytes, values: list[bytes | None]) -> bytes:
    """Parse (no types given: the server infers each, as `PQexecParams` with no types asks),
    Bind (text in, text out), Describe, Execute, Sync."""
    if b"\x00" in command:
        raise Doubt("a NUL byte in a statement")
    if len(values) > 65535 or len(command) + sum(len(v or b"") for v in values) > 1 << 30:
        raise Doubt("more than a message holds")  # libpq refuses these too
    count = len(values).to_bytes(2, "big")
    parse = b"\x00" + command + b"\x00" + b"\x00\x00"
    bind = [b"\x00\x00\x00\x00", count]
    for value in values:
        bind.append(b"\xff\xff\xff\xff" if value is None else len(value).to_bytes(4, "big") + value)
    bind.append(b"\x00\x00")
    body = b"".join(bind)
    return (
        b"P" + (len(parse) + 4).to_bytes(4, "big") + parse
        + b"B" + (len(body) + 4).to_bytes(4, "big") + body
        + b"D\x00\x00\x00\x06P\x00"
        + b"E\x00\x00\x00\x09\x00\x00\x00\x00\x00"
        + SYNC
    )  # fmt: skip


def _readers(body: bytes) -> list[Any]:
    """A RowDescription's columns, each as the reader of its type (text format only)."""
    count = int.from_bytes(body[:2], "big")
    out, pos = [], 2
    for _ in range(count):
        pos = body.index(b"\x00", pos) + 1
        oid = int.from_bytes(body[pos + 6 : pos + 10], "big")
        if body[pos + 16 : pos + 18] != b"\x00\x00":
            raise Doubt("a binary column")
        out.append(reader(oid))
        pos += 18
    return out


def _row(body: bytes, readers: list[Any]) -> tuple[Any, ...]:
    """A DataRow's values, each read by its column's reader (None for NULL)."""
    values, pos = [], 2
    for read in readers:
        size = int.from_bytes(body[pos : pos + 4], "big", signed=True)
        pos += 4
        if size < 0:
            values.append(None)
        else:
            values.append(read(body[pos : pos + size]))
            pos += size
    return tuple(values)


def _fields(body: bytes) -> dict[bytes, Any]:
    """An ErrorResponse's fields by code (`C`: SQLSTATE, `M`: message as text, `V`: severity)."""
    fields: dict[bytes, Any] = {}
    for part in body.split(b"\x00"):
        if part:
            fields[part[:1]] = part[1:]
    for code in (b"C", b"M"):
        if code in fields:
            fields[code] = fields[code].decode("utf-8", "replace")
    return fields


def begin(dsn: str) -> WireConnection | LeanConnection:
    """The lean connection to `dsn`, begun without waiting: the wire's where it is sure, else libpq's."""
    try:
        return WireConnection(dsn)
    except Doubt:
        from loopx_core.store.postgres import libpq

        return libpq.begin(dsn)
