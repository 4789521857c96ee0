"""Text safe to show a person: what a terminal would obey rather than show, written as escapes.

Stored text (a title, an objective, a summary, a notice's body) is data, kept as given; every
place that shows it to a person (tables, Markdown, error lines, a notice sent through Apprise)
passes it through `visible`, the way `repr` writes a control character.
"""

from __future__ import annotations

import re

from typing import TYPE_CHECKING
import re
if TYPE_CHECKING:
    pass

_FORMAT = (
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b\u200c\u200e-\u200f"
    "\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U00013438\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
)
"""Unicode's format characters and line/paragraph separators (categories Cf, Zl, Zp, as of
Unicode 14, Python 3.11's; tests/adversarial/test_terminal_escapes.py checks the running
Python's table): zero-width spaces and joiners, direction marks and the bidi embeddings,
overrides and isolates that reorder a line, a soft hyphen, tag characters. The zero-width
joiner (U+200D) stays: emoji sequences are built with it, and it moves nothing."""
_INVISIBLE = "[\x00-\x09\x0b-\x1f\x7f-\x9f\ud800-\udfff" + _FORMAT + "]"
"""What a terminal obeys rather than shows, or what hides or reorders text: C0 controls but a
newline, DEL, C1 controls (`\\x9b` is a CSI on its own), lone surrogates (a byte that was not
UTF-8) and the format characters. Compiled on first use (`frozen_re`: no `import re`)."""
_INVISIBLE_OR_NEWLINE = "[\x00-\x1f\x7f-\x9f\ud800-\udfff" + _FORMAT + "]"


_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if code < 0x100:
        return _NAMED.get(char) or f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def visible(text: str, *, newlines: bool = True) -> str:
    """`text` safe to write to a terminal: every control character shown as its escape (`\\x1b`).

    A newline stays one where the layout allows it (`newlines`), else it is shown as `\\n` too.
    Ordinary text (printable characters, tabs aside) comes back unchanged.
    """
    return re.compile(_INVISIBLE if newlines else _INVISIBLE_OR_NEWLINE).sub(_escape, text)


_UNSEEN_IN_JSON = "[\x7f-\x9f" + _FORMAT + "]"
"""What `json.dumps(..., ensure_ascii=False)` writes raw and a terminal obeys or hides (json
escapes the C0 controls itself): DEL, the C1 controls, the format characters and separators."""


def json_visible(text: str) -> str:
    """JSON text with those characters as `\\uXXXX` escapes (surrogate pairs above U+FFFF), as
    `ensure_ascii` would write them: the same document to a reader, nothing a terminal obeys."""
    if text.isascii() and "\x7f" not in text:
        return text
    return re.compile(_UNSEEN_IN_JSON).sub(_json_escape, text)


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


ELLIPSIS = "…"


def clipped(text: str, limit: int) -> str:
    """`text` in at most `limit` characters: whole when it fits, else cut at the last space of
    its second half (a whole word stays whole) and ended with an ellipsis, so a shortened
    message reads as shortened rather than as a word cut off."""
    if len(text) <= limit:
        return text
    if limit <= 1:
        return ELLIPSIS[:limit]
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit // 2 and text[limit - 1] != " ":
        cut = cut[:space]
    return cut.rstrip(" ") + ELLIPSIS
