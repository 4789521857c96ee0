"""libpq's connection strings, parsed in Python where that is sure: the common keys, both forms.

`parse` gives what libpq's own `PQconninfoParse` gives (the keys set, each value as written,
nothing from the environment or defaults) for a keyword string (`host=/run/pg dbname=loopx`)
or a URL (`postgresql://user@%2Frun%2Fpg/loopx?options=-c...`) that uses only the keys in
`KEYS`, following libpq's parser step by step; for anything else (another key, a legacy alias,
several hosts, bytes that are not UTF-8) it raises `Doubt`, and libpq's parser answers. A
property test holds both to the same answers on generated strings. A tick on the team store
names its store (`dsn.shown`) without loading libpq.
"""

from __future__ import annotations

from loopx_core.store.postgres.lean_protocol import Doubt

KEYS = frozenset(
    {
        "application_name",
        "client_encoding",
        "connect_timeout",
        "dbname",
        "fallback_application_name",
        "host",
        "hostaddr",
        "options",
        "passfile",
        "password",
        "port",
        "service",
        "sslmode",
        "target_session_attrs",
        "user",
    }
)
"""The libpq keys parsed here (each exists in every libpq psycopg supports)."""
URL_PREFIXES = ("postgresql://", "postgres://")
_SPACE = " \t\n\v\f\r"  # C's isspace in the C locale
_HEX = "0123456789abcdefABCDEF"


def parse(dsn: str) -> dict[str, str]:
    """The DSN's libpq parameters that are set, as `PQconninfoParse` gives them; `Doubt` when unsure."""
    if "\x00" in dsn:
        raise Doubt("a NUL byte")
    try:
        dsn.encode()
    except UnicodeEncodeError:  # a lone surrogate (from a JSON escape): libpq would never see it
        raise Doubt("not encodable") from None
    for prefix in URL_PREFIXES:
        if dsn.startswith(prefix):
            return _url(dsn[len(prefix) :])
    return _keywords(dsn)


def _store(params: dict[str, str], key: str, value: str) -> None:
    if key not in KEYS:
        raise Doubt("a key not parsed here")
    params[key] = value


def _keywords(text: str) -> dict[str, str]:
    """libpq's `conninfo_parse`: `key = value` pairs; a value bare (a backslash escapes the next
    character) or single-quoted (a backslash escapes, a quote ends it)."""
    params: dict[str, str] = {}
    i, n = 0, len(text)
    while i < n:
        if text[i] in _SPACE:
            i += 1
            continue
        start = i
        while i < n and text[i] != "=" and text[i] not in _SPACE:
            i += 1
        key = text[start:i]
        while i < n and text[i] in _SPACE:
            i += 1
        if i >= n or text[i] != "=":
            raise Doubt("no '=' after a key")  # libpq refuses it, and says so
        i += 1
        while i < n and text[i] in _SPACE:
            i += 1
        value: list[str] = []
        if i < n and text[i] == "'":
            i += 1
            while True:
                if i >= n:
                    raise Doubt("an unterminated quoted value")
                if text[i] == "\\":
                    i += 1
                    if i < n:
                        value.append(text[i])
                        i += 1
                    continue
                if text[i] == "'":
                    i += 1
                    break
                value.append(text[i])
                i += 1
        else:
            while i < n:
                if text[i] in _SPACE:
                    i += 1
                    break
                if text[i] == "\\":
                    i += 1
                    if i < n:
                        value.append(text[i])
                        i += 1
                else:
                    value.append(text[i])
                    i += 1
        _store(params, key, "".join(value))
    return params


def _decoded(text: str) -> str:
    """libpq's `conninfo_uri_decode`: %XX escapes (a bad one or %00 is libpq's to refuse)."""
    if "%" not in text:
        return text
    out = bytearray()
    i, n = 0, len(text)
    while i < n:
        if text[i] != "%":
            out += text[i].encode()
            i += 1
            continue
        hi, lo = text[i + 1 : i + 2], text[i + 2 : i + 3]
        if not hi or not lo or hi not in _HEX or lo not in _HEX or hi + lo == "00":
            raise Doubt("a bad percent escape")
        out.append(int(hi + lo, 16))
        i += 3
    try:
        return out.decode()
    except UnicodeDecodeError:
        raise Doubt("not UTF-8") from None


def _url(rest: str) -> dict[str, str]:
    """libpq's `conninfo_uri_parse_options` after the scheme: `[user[:password]@][host][:port][/dbname][?k=v&...]`."""
    if any(char in _SPACE for char in rest):  # libpq's versions differ on spaces in a URL
        raise Doubt("a space in a URL")
    params: dict[str, str] = {}
    at = _first(rest, "@/")
    if at < len(rest) and rest[at] == "@":
        end = _first(rest, ":@")
        user = rest[:end]
        if user:
            params["user"] = _decoded(user)
        if rest[end] == ":":
            password = rest[end + 1 : at]
            if password:
                params["password"] = _decoded(password)
        rest = rest[at + 1 :]
    if rest.startswith("["):
        raise Doubt("an IPv6 address")
    host, stop, rest = _cut(rest, ":/?,")
    if stop == ":":
        port, stop, rest = _cut(rest, "/?,")
        if port:
            params["port"] = _decoded(port)
    if stop == ",":
        raise Doubt("several hosts")
    if host:
        params["host"] = _decoded(host)
    if stop == "/":
        dbname, stop, rest = _cut(rest, "?")
        if dbname:
            params["dbname"] = _decoded(dbname)
    if stop:  # "?": the query parameters
        _query(rest, params)
    return params


def _query(text: str, params: dict[str, str]) -> None:
    """libpq's `conninfo_uri_parse_params`: `key=value` pairs joined by `&`, each part decoded."""
    while text:
        end = _first(text, "&")
        pair, text = text[:end], text[end + 1 :]
        key, equals, value = pair.partition("=")
        if not equals or "=" in value:
            raise Doubt("a query parameter without one '='")
        _store(params, _decoded(key), _decoded(value))  # `ssl` (libpq's JDBC alias) is no key here


def _cut(text: str, stops: str) -> tuple[str, str, str]:
    """`text` cut at its first character of `stops`: what is before, that character ("" at the
    end), what is after."""
    end = _first(text, stops)
    return text[:end], text[end : end + 1], text[end + 1 :]


def _first(text: str, stops: str) -> int:
    """The index of the first character of `stops` in `text` (its length when there is none)."""
    return next((i for i, char in enumerate(text) if char in stops), len(text))
