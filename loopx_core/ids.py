"""Identifier validation: every id is a safe, lower-case path segment, matched in full."""

from __future__ import annotations

import re

from loopx_core.errors import UsageError

ID_PATTERN = r"^[a-z0-9][a-z0-9._-]{0,63}$"
"""The id pattern as pydantic (Rust regex: `$` is the end of the text) checks it."""
ID_RE = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
"""The id pattern, for `fullmatch`."""
SHOWN_CHARS = 60
"""How much of a refused value an error message echoes."""


def shown_value(value: object) -> str:
    """`repr(value)`, cut to `SHOWN_CHARS` characters so a huge input is never echoed whole."""
    text = repr(value)
    return text if len(text) <= SHOWN_CHARS else f"{text[: SHOWN_CHARS - 5]}...{text[-1]}"


def is_valid_id(value: object) -> bool:
    """True when `value` matches the id pattern in full and cannot name a path outside `.loopx/`."""
    return isinstance(value, str) and bool(ID_RE.fullmatch(value)) and ".." not in value


def check_id(kind: str, value: str) -> str:
    """Return `value` if it is a valid id, else raise a one-line `UsageError`."""
    if not is_valid_id(value):
        raise UsageError(
            f"invalid {kind} id {shown_value(value)}: use 1-64 of a-z 0-9 . _ - "
            "(lower case, starting with a letter or digit, no '..')"
        )
    return value


def check_capabilities(values: list[str] | tuple[str, ...], *, option: str = "--capability") -> list[str]:
    """Capabilities as stored and matched: each an id in lower case (`Python` is `python`),
    blanks dropped, sorted, each once; any other word raises a one-line `UsageError`."""
    found = set()
    for value in values:
        word = value.strip().lower()
        if not word:
            continue
        if not is_valid_id(word):
            raise UsageError(
                f"invalid capability {shown_value(value)} ({option}): use 1-64 of a-z 0-9 . _ - "
                "(any case, starting with a letter or digit, no '..')"
            )
        found.add(word)
    return sorted(found)
