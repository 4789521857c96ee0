"""Class: event streams that leak, stall or miss a change when clients come and go.

Pages listen to `/events`. For any sequence of clients opening a stream, dropping it (a
clean close or a reset), and the store changing under them, every stream still open gets a
`change` event for each change made while it was open, a dropped stream stops counting as
a listener, and once every client is gone none is left (the watcher then stops polling).
"""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.ops import todos
from loopx_core.store.files import FileStore
from tests.browser import Served, fleet, served_thread, signed_in
from tests.conftest import T0

OPS = st.lists(st.sampled_from(["open", "open", "reset", "close", "change"]), min_size=1, max_size=8)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, FileStore]]:
    root: Path = tmp_path_factory.mktemp("streams")
    store = FileStore(root)
    fleet(store)
    with served_thread(store, poll_seconds=0.1) as served:
        yield served, store


class Stream:
    """One raw `/events` connection and what it has read."""

    def __init__(self, served: Served) -> None:
        host, port = served.base.rsplit("//", 1)[1].split(":")
        self.sock = socket.create_connection((host, int(port)), timeout=10)
        headers = f"Host: {host}:{port}\r\nCookie: {signed_in(served.token)['Cookie']}\r\n"
        self.sock.sendall(f"GET /events HTTP/1.1\r\n{headers}\r\n".encode())
        self.data = b""
        self.read_until(b"event: hello")
        self.expected = 0

    def read_until(self, marker: bytes, count: int = 1, timeout: float = 10) -> bool:
        deadline = time.monotonic() + timeout
        while self.data.count(marker) < count and time.monotonic() < deadline:
            self.sock.settimeout(max(0.05, deadline - time.monotonic()))
            try:
                chunk = self.sock.recv(65536)
            except TimeoutError:
                break
            if not chunk:
                break
            self.data += chunk
        return self.data.count(marker) >= count

    def drop(self, reset: bool) -> None:
        if reset:  # SO_LINGER 0: the close sends a RST, as a killed browser tab may
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.sock.close()


def listeners(served: Served, want: int, timeout: float = 10) -> int:
    deadline = time.monotonic() + timeout
    while served.app.dashboard.watcher.listeners != want and time.monotonic() < deadline:
        time.sleep(0.05)
    return served.app.dashboard.watcher.listeners


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS)
def test_streams_come_and_go_while_the_store_changes(site: tuple[Served, FileStore], ops: list[str]) -> None:
    served, store = site
    open_streams: list[Stream] = []
    try:
        for op in ops:
            if op == "open":
                open_streams.append(Stream(served))
            elif op in ("reset", "close") and open_streams:
                open_streams.pop(0).drop(reset=op == "reset")
            elif op == "change":
                todos.add_todo(store, "docs", "a change", T0)
                for stream in open_streams:
                    stream.expected += 1
                    assert stream.read_until(b"event: change", stream.expected), stream.data[-200:]
            assert listeners(served, len(open_streams)) == len(open_streams), ops
    finally:
        for stream in open_streams:
            stream.drop(reset=False)
    assert listeners(served, 0) == 0
