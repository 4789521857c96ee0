"""Identifier validation: every id is a safe, lower-case path segment."""

from __future__ import annotations

import re

from loopx_core.errors import UsageError

ID_PATTERN = r"^[a-z0-9][a-z0-9._-]{0,63}$"
_ID_RE = re.compile(ID_PATTERN)


def is_valid_id(value: str) -> bool:
    """True when `value` matches the id pattern and cannot name a path outside `.loopx/`."""
    return bool(_ID_RE.match(value)) and ".." not in value


def check_id(kind: str, value: str) -> str:
    """Return `value` if it is a valid id, else raise a one-line `UsageError`."""
    if not is_valid_id(value):
        raise UsageError(
            f"invalid {kind} id {value!r}: use 1-64 of a-z 0-9 . _ - "
            "(lower case, starting with a letter or digit, no '..')"
        )
    return value
