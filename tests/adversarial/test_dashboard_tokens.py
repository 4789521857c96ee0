"""Class: a token `loopx dashboard` accepts that cannot sign a browser in, or a refusal that tells.

The printed URL carries the token; the first request with it sets a cookie holding it. Any
`--token` the command accepts must survive the URL, the Set-Cookie header and the Cookie a
browser sends back; any other is refused at launch with one line (exit 2). A request that is
not signed in learns nothing but the refusal: no goal, no agent, not the store.
Found: `--token` of 16 `€` made uvicorn print a traceback (a 500); a `;`, `"`, `\\`, or `é`
in it set a cookie that never signed in.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.dashboard.app import create_app
from loopx_core.dashboard.security import MIN_TOKEN_CHARS, Guard, launch_token
from loopx_core.dashboard.server import url
from loopx_core.errors import UsageError
from loopx_core.store.files import FileStore
from tests.browser import asgi, fleet

TOKENS = st.one_of(
    st.text(min_size=MIN_TOKEN_CHARS - 2, max_size=40),
    st.text(st.characters(min_codepoint=32, max_codepoint=126), min_size=MIN_TOKEN_CHARS, max_size=40),
    st.text(st.sampled_from('Aa0-._~+/=;,"\\é€ '), min_size=MIN_TOKEN_CHARS, max_size=24),
)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FileStore]:
    root: Path = tmp_path_factory.mktemp("tokens")
    files = FileStore(root)
    fleet(files)
    yield files


def browser_cookie(set_cookie: str) -> str:
    """The Cookie header a browser sends back for one Set-Cookie (name=value, up to the first `;`)."""
    return set_cookie.split(";", 1)[0]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(given_token=TOKENS)
def test_an_accepted_token_signs_in_and_any_other_is_refused_at_launch(
    store: FileStore, given_token: str
) -> None:
    try:
        token = launch_token("127.0.0.1", given_token)
    except UsageError as error:
        assert "\n" not in error.message and "--token" in error.message
        return
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        printed = url("127.0.0.1", sock, token)
    (from_url,) = parse_qs(urlsplit(printed).query)["token"]
    assert from_url == token
    app = create_app(store, Guard(token, loopback_only=True))
    first = asgi(app, "GET", "/?token=" + quote(from_url, safe=""))
    assert first.status == 303 and first.headers["location"] == "/", first
    cookie = browser_cookie(first.headers["set-cookie"])
    parsed: SimpleCookie = SimpleCookie()
    parsed.load(cookie)
    assert [m.value for m in parsed.values()] == [token]
    assert asgi(app, "GET", "/", headers={"Cookie": cookie}).status == 200


@pytest.mark.parametrize("token", ["€" * 16, "a" * 16 + ";b=c", "é" * 16, "a" * 16 + '"', "a b" * 6])
def test_the_found_tokens_are_refused_at_launch(token: str) -> None:
    with pytest.raises(UsageError, match="each one of"):
        launch_token("127.0.0.1", token)


@pytest.mark.parametrize("path", ["/", "/goals/parser", "/agents", "/static/dashboard.js", "/nope"])
@pytest.mark.parametrize("cookie", [None, "loopx_dashboard_x=wrong", "garbage;;;"])
def test_a_refusal_names_nothing_of_the_store(store: FileStore, path: str, cookie: str | None) -> None:
    app = create_app(store, Guard("s" * 24, loopback_only=True))
    reply = asgi(app, "GET", path, headers={"Cookie": cookie} if cookie else {})
    assert reply.status == 403
    body = reply.body
    assert f"<code>{store.label}</code>" not in body
    for name in ("parser", "docs", "builder", "reviewer", "api-review"):
        assert name not in body, name
    wrong = asgi(app, "GET", path + "?token=" + "w" * 24)
    assert wrong.status == 403 and f"<code>{store.label}</code>" not in wrong.body


@pytest.mark.parametrize("token", ["a+b/c=d~e.f_g-h0123", "Z" * 16, "0123456789abcdef-_"])
def test_tokens_of_every_allowed_character_sign_in(store: FileStore, token: str) -> None:
    app = create_app(store, Guard(launch_token("127.0.0.1", token), loopback_only=True))
    first = asgi(app, "GET", "/agents?token=" + quote(token, safe=""))
    assert first.status == 303 and first.headers["location"] == "/agents"
    assert (
        asgi(app, "GET", "/agents", headers={"Cookie": browser_cookie(first.headers["set-cookie"])}).status
        == 200
    )
