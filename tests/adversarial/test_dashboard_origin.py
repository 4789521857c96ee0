"""Class: a POST that did not come from this dashboard's own page changes the state (CSRF).

Every owner action needs the page's CSRF field and an Origin of this very server; without an
Origin header, a Referer of this server. For any Origin and Referer a client may send (none,
`null`, this server, another port, scheme, host or case, userinfo, garbage) the action runs
exactly when the rule says so, and a refused one changes nothing.
Found: `Origin: null` with a Referer of this server was accepted (an opaque origin, as a
sandboxed frame or a `file:` page sends, is never this server).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.dashboard.app import create_app
from loopx_core.dashboard.security import Guard
from loopx_core.ops import goals
from loopx_core.store.files import FileStore
from tests.browser import asgi, fleet, signed_in
from tests.conftest import T0

TOKEN = "o" * 24
HOST = "127.0.0.1:8765"
HERE = f"http://{HOST}"
ORIGINS = st.one_of(
    st.none(),
    st.sampled_from(
        [
            "null",
            "",
            HERE,
            HERE + "/",
            "HTTP://127.0.0.1:8765",
            "http://127.0.0.1:8766",
            "https://127.0.0.1:8765",
            "http://localhost:8765",
            "http://evil.example",
            "http://127.0.0.1:8765.evil.example",
            "http://user@127.0.0.1:8765",
            "file://",
            "ftp://127.0.0.1:8765",
        ]
    ),
    st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=30),
)
REFERERS = st.one_of(
    st.none(),
    st.sampled_from(["null", "", HERE + "/", HERE + "/goals/parser", "http://evil.example/", HERE]),
    st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=30),
)


def from_here(url: str | None) -> bool:
    """The rule: an http(s) URL whose host and port are this server's."""
    if not url or url == "null":
        return False
    parts = urlsplit(url)
    return parts.scheme.lower() in ("http", "https") and parts.netloc.lower() == HOST


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[Any, FileStore]]:
    store = FileStore(tmp_path)
    fleet(store)
    yield create_app(store, Guard(TOKEN, loopback_only=True)), store


def snapshot(store: FileStore) -> object:
    return store.read_goal("infra").dump(), store.read_registry().dump()


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(origin=ORIGINS, referer=REFERERS, csrf=st.booleans())
def test_an_action_runs_only_from_this_servers_page(
    site: tuple[Any, FileStore], origin: str | None, referer: str | None, csrf: bool
) -> None:
    app, store = site
    headers = {**signed_in(TOKEN), "Content-Type": "application/x-www-form-urlencoded"}
    if origin is not None:
        headers["Origin"] = origin
    if referer is not None:
        headers["Referer"] = referer
    form = {"csrf": Guard(TOKEN, loopback_only=True).csrf if csrf else "guess"}
    before = snapshot(store)
    reply = asgi(app, "POST", "/goals/infra/resume", headers=headers, body=urlencode(form).encode())
    allowed = csrf and (from_here(origin) if origin is not None else from_here(referer))
    if allowed:
        assert reply.status == 303, (origin, referer, reply.status)
        assert store.read_registry().goals["infra"].status == "active"
        goals.set_goal_status(store, "infra", "stopped", T0)  # as it was, for the next example
    else:
        assert reply.status == 403, (origin, referer, csrf, reply.status)
        assert snapshot(store) == before


@pytest.mark.parametrize("referer", [HERE + "/goals/infra", None])
def test_origin_null_is_refused(site: tuple[Any, FileStore], referer: str | None) -> None:
    app, store = site
    headers = {**signed_in(TOKEN), "Content-Type": "application/x-www-form-urlencoded", "Origin": "null"}
    if referer:
        headers["Referer"] = referer
    body = urlencode({"csrf": Guard(TOKEN, loopback_only=True).csrf}).encode()
    assert asgi(app, "POST", "/goals/infra/resume", headers=headers, body=body).status == 403
    assert store.read_registry().goals["infra"].status == "stopped"
