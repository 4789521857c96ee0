"""Generated store DSNs in both libpq forms (URL and key=value), shared by the DSN tests."""

from __future__ import annotations

from urllib.parse import quote

from hypothesis import strategies as st

WORD = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=20)
NAME = st.from_regex(r"[a-z][a-z0-9-]{0,12}", fullmatch=True)
PASSWORD = WORD.map(lambda w: "Zq§" + w)  # distinctive: never a substring of a message by chance


def url(user: str, password: str | None, host: str, port: int | None, db: str, sslmode: str) -> str:
    """The DSN as a `postgresql://` URL, every part percent-quoted."""
    auth = quote(user, safe="") + (":" + quote(password, safe="") if password is not None else "") + "@"
    return f"postgresql://{auth}{host}{f':{port}' if port else ''}/{db}?sslmode={sslmode}&application_name=x"


def keywords(user: str, password: str | None, host: str, port: int | None, db: str, sslmode: str) -> str:
    """The DSN as libpq `key=value` words, values single-quoted."""

    def q(value: str) -> str:
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"

    parts = [f"host={host}", f"dbname={db}", f"user={q(user)}", f"sslmode={sslmode}"]
    if port:
        parts.append(f"port={port}")
    if password is not None:
        parts.append(f"password={q(password)}")
    return " ".join(parts)


DSNS = st.builds(
    lambda form, *a: form(*a),
    st.sampled_from([url, keywords]),
    WORD,
    st.one_of(st.none(), PASSWORD),
    NAME,
    st.one_of(st.none(), st.integers(1, 65535)),
    NAME,
    st.sampled_from(["require", "verify-full", "disable"]),
)
