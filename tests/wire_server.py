"""A scripted PostgreSQL server on a unix socket, for what no real server would send.

The wire transport is proven against the real server everywhere else; this one answers with
what a test scripts (messages cut into any chunks, malformed ones, a socket that ends early),
and records what each client sent, so a client's startup packet can be held byte for byte to
libpq's own.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

Script = Callable[[socket.socket], None]


def message(kind: bytes, body: bytes = b"") -> bytes:
    """One backend message: its kind byte, its length (self included), its body."""
    return kind + (len(body) + 4).to_bytes(4, "big") + body


def parameter(name: str, value: str) -> bytes:
    """A ParameterStatus message."""
    return message(b"S", name.encode() + b"\x00" + value.encode() + b"\x00")


READY = message(b"Z", b"I")
HELLO = (
    message(b"R", b"\x00\x00\x00\x00")
    + parameter("client_encoding", "UTF8")
    + parameter("server_version", "16.0")
    + message(b"K", b"\x00\x00\x00\x01\x00\x00\x00\x02")
    + READY
)
"""A server's answer to a startup packet under trust authentication."""


def read_packet(conn: socket.socket) -> bytes:
    """One length-prefixed packet from the client (the startup packet); b"" at its end."""
    head = _exactly(conn, 4)
    return head + _exactly(conn, int.from_bytes(head, "big") - 4) if head else b""


def read_frontend(conn: socket.socket) -> list[bytes]:
    """The client's messages up to its Sync or simple Query (their kinds)."""
    kinds = []
    while True:
        head = _exactly(conn, 5)
        if not head:
            return kinds
        _exactly(conn, int.from_bytes(head[1:], "big") - 4)
        kinds.append(head[:1])
        if head[:1] in (b"S", b"Q", b"X"):
            return kinds


def _exactly(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            return b""
        data += chunk
    return data


def send_in_chunks(conn: socket.socket, data: bytes, cuts: list[int]) -> None:
    """`data` sent cut at `cuts` (offsets), a pause after each piece so the client reads it alone."""
    start = 0
    for cut in [*sorted(c for c in cuts if 0 < c < len(data)), len(data)]:
        conn.sendall(data[start:cut])
        start = cut
        time.sleep(0.0005)


class Server:
    """Listens at `folder/.s.PGSQL.5432`; the n-th client is served by the n-th script."""

    def __init__(self, folder: Path, scripts: list[Script]) -> None:
        self.dsn = f"host={folder} port=5432 dbname=loopx user=tester"
        self.packets: list[bytes] = []
        self.failures: list[BaseException] = []
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(str(folder / ".s.PGSQL.5432"))
        self._listener.listen(4)
        self._listener.settimeout(10)
        self._thread = threading.Thread(target=self._serve, args=(scripts,), daemon=True)
        self._thread.start()

    def _serve(self, scripts: list[Script]) -> None:
        for script in scripts:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)  # a client stuck waiting gets its end of file, and fails its test
                try:
                    self.packets.append(read_packet(conn))
                    script(conn)
                except OSError:
                    pass  # the client went away first
                except BaseException as failure:
                    self.failures.append(failure)

    def close(self) -> None:
        """Stop listening and wait for the scripts; a script's own failure is raised here."""
        self._thread.join(10)
        self._listener.close()
        if self.failures:
            raise self.failures[0]


@contextmanager
def serving(folder: Path, *scripts: Script) -> Iterator[Server]:
    """A `Server` for the block."""
    server = Server(folder, list(scripts))
    try:
        yield server
    finally:
        server.close()
