"""Class: a client that goes away in the middle of a request is no dashboard bug.

Observed: a browser that dropped its connection mid-POST was logged as `internal error:
ClientDisconnect`, a bug to report. Generated: a POST to any action, cut after any number of
its body's bytes (headers promising more), then the socket closed: the server's stderr holds
no `internal error`, nothing changed, and the server answers the next request as before.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path
from urllib.parse import urlencode, urlsplit

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.dashboard.actions import ACTIONS
from loopx_core.dashboard.security import Guard
from loopx_core.store.files import FileStore
from tests.browser import fleet, request, served_cli
from tests.builders import tree


def _cut_post(base: str, token: str, path: str, body: bytes, keep: int) -> None:
    parts = urlsplit(base)
    guard = Guard(token, loopback_only=True)
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {parts.netloc}\r\nOrigin: {base}\r\n"
        f"Cookie: {guard.cookie_name}={token}\r\nContent-Type: application/x-www-form-urlencoded\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(head + body[:keep])
        time.sleep(0.05)  # the server is reading the body when the client goes


def test_a_dropped_post_is_not_an_internal_error(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    fleet(FileStore(root))
    before = tree(root / ".loopx" / "goals")
    with served_cli(root) as served:

        @settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
        @given(action=st.sampled_from(sorted(ACTIONS)), fraction=st.floats(0, 0.99))
        def drop(action: str, fraction: float) -> None:
            fields = {"csrf": Guard(served.token, loopback_only=True).csrf, "title": "x" * 400, "reason": "y"}
            body = urlencode(fields).encode()
            _cut_post(served.base, served.token, f"/goals/parser/{action}", body, int(len(body) * fraction))

        drop()
        assert request(served, "GET", "/").status == 200
        assert served.process is not None
        served.process.send_signal(2)
        _, err = served.process.communicate(timeout=15)
    assert "internal error" not in err, err
    assert tree(root / ".loopx" / "goals") == before
