"""Class: a redirect the dashboard sends leads off this server (an open redirect).

The dashboard redirects twice: signing in (`...?token=T` to the same URL without the token)
and after an owner action (to the form's `back` path). A browser reads `//host`, `/\\host`,
`\\host`, a scheme, or any of these with tabs and newlines in them as another site, so for
any request target and any `back` value the Location must resolve to this very server.
Found: `GET //evil.example/?token=T` answered `Location: //evil.example/`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, urlencode, urljoin, urlsplit

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.dashboard.app import create_app
from loopx_core.dashboard.security import Guard, local_path
from loopx_core.store.files import FileStore
from tests.browser import asgi, fleet, signed_in

TOKEN = "r" * 24
BASE = "http://127.0.0.1:8765"
TRICKY = st.sampled_from(
    [
        "/",
        "//",
        "\\",
        "/\\",
        "\\\\",
        "\t",
        "\n",
        "\r",
        "%2f",
        "%5c",
        "%09",
        "evil.example",
        "@",
        ":",
        "http:",
        "?",
        "#",
    ]
)
TARGETS = st.lists(st.one_of(TRICKY, st.text(max_size=6)), min_size=1, max_size=6).map("".join)


def stays_here(location: str) -> bool:
    """True when a browser following `location` from this server stays on it."""
    cleaned = "".join(c for c in location if c not in "\t\r\n").replace("\\", "/")
    target = urlsplit(urljoin(BASE + "/", cleaned))
    return target.scheme == "http" and target.netloc == urlsplit(BASE).netloc


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    root: Path = tmp_path_factory.mktemp("redirects")
    store = FileStore(root)
    fleet(store)
    yield create_app(store, Guard(TOKEN, loopback_only=True))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(target=TARGETS)
def test_signing_in_from_any_target_lands_on_this_server(app: object, target: str) -> None:
    raw = "/" + quote(target, safe="/\\@:%")
    reply = asgi(app, "GET", f"{raw}?token={TOKEN}")
    assert reply.status == 303, (raw, reply.status)
    location = reply.headers["location"]
    assert location.startswith("/") and stays_here(location), (raw, location)
    assert TOKEN not in location


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(back=TARGETS)
def test_an_action_goes_back_to_this_server_whatever_back_says(app: object, back: str) -> None:
    form = {"csrf": Guard(TOKEN, loopback_only=True).csrf, "back": back}
    reply = asgi(
        app,
        "POST",
        "/goals/infra/resume",
        headers={**signed_in(TOKEN), "Origin": BASE, "Content-Type": "application/x-www-form-urlencoded"},
        body=urlencode(form).encode(),
    )
    assert reply.status in (303, 400), (back, reply.status, reply.body[-200:])
    if reply.status == 303:
        assert stays_here(reply.headers["location"]), (back, reply.headers["location"])


@given(value=TARGETS)
def test_local_path_is_a_path_of_this_server_or_none(value: str) -> None:
    path = local_path(value)
    assert path is None or (path.startswith("/") and stays_here(path)), (value, path)


@pytest.mark.parametrize("target", ["//evil.example/", "//evil.example/goals/parser", "///evil.example"])
def test_the_found_case(app: object, target: str) -> None:
    reply = asgi(app, "GET", f"{target}?token={TOKEN}")
    assert reply.status == 303 and reply.headers["location"] == "/"
