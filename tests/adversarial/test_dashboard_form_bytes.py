"""Class: bytes in a form or query string that are not what they claim, stored or crashing.

A form field is percent-encoded UTF-8 text. For any bytes a client sends, raw in the body or
percent-encoded, an action either stores exactly the text those bytes spell (as `loopx todo
add` would) or answers 400 and changes nothing: invalid UTF-8 is never stored as U+FFFD, and a
NUL (no command line can carry one, so no CLI twin could send it) is refused. Any query string
on any page is a page, never a 500 (percent-encoded bytes, as a client sends them; raw
bytes above 0x7f, which uvicorn refuses before the app, are a 400 from the app too).
Found: `title=%ff%fe` added a todo titled U+FFFD U+FFFD; `title=a%00b` a todo with a NUL.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote_from_bytes

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.dashboard.actions import MAX_FIELD_CHARS
from loopx_core.dashboard.app import create_app
from loopx_core.dashboard.security import Guard
from loopx_core.store.files import FileStore
from tests.browser import asgi, fleet, signed_in

TOKEN = "f" * 24
CSRF = Guard(TOKEN, loopback_only=True).csrf
HEADERS = {
    **signed_in(TOKEN),
    "Origin": "http://127.0.0.1:8765",
    "Content-Type": "application/x-www-form-urlencoded",
}
TEXTY = st.one_of(
    st.binary(max_size=24),
    st.text(max_size=12).map(lambda s: s.encode("utf-8", "surrogatepass")),
    st.sampled_from([b"\xff\xfe", b"a\x00b", b"\xc0\xae", b"\xed\xa0\x80", b"ok", b"\xe2\x82", b" "]),
)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, FileStore]]:
    root: Path = tmp_path_factory.mktemp("bytes")
    store = FileStore(root)
    fleet(store)
    yield create_app(store, Guard(TOKEN, loopback_only=True)), store


def spelled(value: bytes) -> str | None:
    """The title `value` spells, or None when the dashboard must refuse it."""
    try:
        text = value.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if "\x00" in text or not text.strip() or len(text) > MAX_FIELD_CHARS:
        return None
    return text.strip()


def titles(store: FileStore) -> list[str]:
    return [t.title for t in store.read_goal("docs").todos]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=TEXTY, raw=st.booleans())
def test_a_title_is_stored_as_its_bytes_spell_it_or_refused(
    site: tuple[Any, FileStore], value: bytes, raw: bool
) -> None:
    app, store = site
    if raw:  # bytes straight in the body (as a careless client sends), separators kept out
        value = bytes(b for b in value if b not in b"&=%+")
        encoded = value
    else:
        encoded = quote_from_bytes(value, safe="").encode()
    before = titles(store)
    reply = asgi(
        app,
        "POST",
        "/goals/docs/add-todo",
        headers=HEADERS,
        body=b"csrf=" + CSRF.encode() + b"&title=" + encoded,
    )
    expected = spelled(value)
    if expected is None:
        assert reply.status == 400, (value, reply.status)
        assert titles(store) == before
    else:
        assert reply.status == 303, (value, reply.status, reply.body[-200:])
        assert titles(store) == [*before, expected]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    path=st.sampled_from(["/", "/goals/parser", "/agents", "/goals/ghost", "/static/dashboard.css"]),
    query=st.binary(max_size=30),
)
def test_any_query_string_on_any_page_is_a_page(site: tuple[Any, FileStore], path: str, query: bytes) -> None:
    app, _ = site
    encoded = asgi(app, "GET", path + "?" + quote_from_bytes(query, safe="=&%"), headers=signed_in(TOKEN))
    assert encoded.status in (200, 303, 403, 404), (query, encoded.status)
    assert "Traceback" not in encoded.body and "internal error" not in encoded.body
    reply = asgi(app, "GET", path + "?" + query.decode("latin-1"), headers=signed_in(TOKEN))
    assert reply.status in ((200, 303, 403, 404) if query.isascii() else (400,)), (query, reply.status)
    assert "Traceback" not in reply.body and "internal error" not in reply.body


@pytest.mark.parametrize("title", [b"%ff%fe", b"a%00b", b"%c0%ae"])
def test_the_found_titles_are_refused(site: tuple[Any, FileStore], title: bytes) -> None:
    app, store = site
    before = titles(store)
    reply = asgi(
        app,
        "POST",
        "/goals/docs/add-todo",
        headers=HEADERS,
        body=b"csrf=" + CSRF.encode() + b"&title=" + title,
    )
    assert reply.status == 400 and titles(store) == before
