"""`conninfo.parse` gives what libpq's own parser gives, or stands aside (`Doubt`).

A tick names its store (`dsn.shown`) and the wire transport finds its socket from this parse,
so libpq is not loaded for either; libpq's `PQconninfoParse` (through `libpq.conninfo`) is the
judge here, on generated strings of both forms built from the characters each grammar treats
specially, and on every DSN the other DSN tests generate.
"""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopx_core.store import dsn as dsns
from loopx_core.store.postgres import conninfo, libpq, wire
from loopx_core.store.postgres.lean_protocol import Doubt
from tests.dsns import DSNS

SPECIAL = " \t\n\\'\"=@:/?&,%[]#+"
PIECE = st.one_of(
    st.sampled_from(list(SPECIAL)),
    st.sampled_from(["%2F", "%2f", "%00", "%zz", "%4", "%C3%A9", "%FF", "%25", "%3D", "%26"]),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",), exclude_characters="\x00"), max_size=4),
    st.sampled_from(["/tmp/s", "loopx", "5432", "-csearch_path=a", "é"]),
)
FRAGMENT = st.lists(PIECE, max_size=6).map("".join)
KEY = st.one_of(
    st.sampled_from(sorted(conninfo.KEYS)), st.sampled_from(["bogus", "ssl", "requiressl", "", "Host"])
)


@st.composite
def urls(draw: st.DrawFn) -> str:
    """A `postgresql://` (or `postgres://`) URL from pieces: user info, hosts, port, path, query."""
    out = draw(st.sampled_from(["postgresql://", "postgres://"]))
    if draw(st.booleans()):
        out += draw(FRAGMENT) + (":" + draw(FRAGMENT) if draw(st.booleans()) else "") + "@"
    out += draw(FRAGMENT)
    if draw(st.booleans()):
        out += ":" + draw(st.one_of(st.sampled_from(["5432", "", "x", "1,2"]), FRAGMENT))
    if draw(st.booleans()):
        out += "/" + draw(FRAGMENT)
    if draw(st.booleans()):
        pairs = draw(st.lists(st.tuples(KEY, FRAGMENT), max_size=4))
        out += "?" + "&".join(f"{k}={v}" if draw(st.booleans()) else k + v for k, v in pairs)
        out += draw(st.sampled_from(["", "&", "&&", "="]))
    return out


@st.composite
def keyword_strings(draw: st.DrawFn) -> str:
    """`key=value` words: spaces around `=`, bare values with escapes, quoted values, junk between."""
    words = []
    for key, value in draw(st.lists(st.tuples(KEY, FRAGMENT), max_size=5)):
        space = draw(st.sampled_from(["", " ", "\t", "  "]))
        style = draw(st.sampled_from(["bare", "quoted", "escaped", "raw"]))
        if style == "quoted":
            value = "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
        elif style == "escaped":
            value = "".join("\\" + c if c in " \\'" else c for c in value)
        words.append(f"{key}{space}={space}{value}")
    return draw(st.sampled_from([" ", "  ", "\n"])).join(words) + draw(st.sampled_from(["", " ", "'", "\\"]))


def python_parse(text: str) -> dict[str, str] | None:
    try:
        return conninfo.parse(text)
    except Doubt:
        return None


def libpq_parse(text: str) -> dict[str, str] | None:
    try:
        return libpq.conninfo(text)
    except Doubt:
        return None


@settings(max_examples=1500, deadline=None)
@given(text=st.one_of(urls(), keyword_strings(), FRAGMENT))
def test_what_python_parses_libpq_parses_alike(text: str) -> None:
    parsed = python_parse(text)
    if parsed is not None:
        assert libpq_parse(text) == parsed


@settings(max_examples=300, deadline=None)
@given(text=DSNS)
def test_every_generated_store_dsn_is_parsed_in_python_as_libpq_parses_it(text: str) -> None:
    parsed = python_parse(text)
    assert parsed is not None  # the common forms never need libpq
    assert parsed == libpq_parse(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "postgresql:///loopx?host=%2Ftmp%2Fs&options=-csearch_path%3Dt1",
            {"dbname": "loopx", "host": "/tmp/s", "options": "-csearch_path=t1"},
        ),
        ("host=/run/postgresql dbname=loopx", {"host": "/run/postgresql", "dbname": "loopx"}),
        ("host = '/a b' user=me\\ you", {"host": "/a b", "user": "me you"}),
        (
            "postgres://u:p@%2Fs:5433/d",
            {"user": "u", "password": "p", "host": "/s", "port": "5433", "dbname": "d"},
        ),
        ("", {}),
    ],
    ids=["url-socket", "keywords", "quoted-escaped", "userinfo", "empty"],
)
def test_the_common_forms(text: str, expected: dict[str, str]) -> None:
    assert conninfo.parse(text) == expected == libpq.conninfo(text)


@pytest.mark.parametrize(
    "text",
    [
        "requiressl=1",
        "postgresql://h?ssl=true",
        "postgresql://a,b/db",
        "postgresql://[::1]/db",
        "keepalives=1",
        "host=a\x00",
        "postgresql:///d?host=/a=b",
        "postgresql:///d?host",
        "postgresql:///d?=x",
        "host",
        "host='/a",
        "postgresql:///d?host=%2",
        "postgresql:///d?host=%00",
    ],
    ids=[
        "legacy-alias",
        "jdbc-alias",
        "several-hosts",
        "ipv6",
        "other-key",
        "nul",
        "two-equals",
        "no-equals",
        "no-key",
        "keyword-without-value",
        "unterminated-quote",
        "short-escape",
        "escaped-nul",
    ],
)
def test_what_is_not_parsed_here_is_libpq_s(text: str) -> None:
    with pytest.raises(Doubt):
        conninfo.parse(text)


def test_the_store_is_named_without_loading_libpq(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(libpq, "_LIB", [None])  # libpq would refuse to load: the name needs none
    assert dsns.shown("host=/run/postgresql port=5433 dbname=team") == "postgresql:///team"
    assert (
        dsns.shown("postgresql://db.internal:5433/team?sslmode=require")
        == "postgresql://db.internal:5433/team"
    )


ANY_TEXT = st.text(st.characters(), max_size=40)  # surrogates and NUL bytes included


@settings(max_examples=500, deadline=None)
@given(text=st.one_of(ANY_TEXT, ANY_TEXT.map(lambda t: "postgresql://" + t), urls(), keyword_strings()))
def test_any_text_is_parsed_or_a_doubt_and_a_socket_found_or_a_doubt(text: str) -> None:
    for step in (conninfo.parse, wire.startup):
        with contextlib.suppress(Doubt):  # anything else fails the test
            step(text)
