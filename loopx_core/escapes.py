"""Text safe to show a person: what a terminal would obey rather than show, written as escapes.

Stored text (a title, an objective, a summary, a notice's body) is data, kept as given; every
place that shows it to a person (tables, Markdown, error lines, a notice sent through Apprise)
passes it through `visible`, the way `repr` writes a control character.
"""

from __future__ import annotations

import re
import unicodedata

_CONTROLS = re.compile("[\x00-\x09\x0b-\x1f\x7f]")
"""The ASCII controls but a newline: all a terminal may obey in ASCII text."""
_HIDDEN_CATEGORIES = frozenset(("Cc", "Cf", "Cs", "Zl", "Zp"))
"""Controls (C0 and C1: `\x9b` is a CSI on its own), the format characters (zero-width spaces,
direction marks and the bidi embeddings, overrides and isolates that reorder a line, a soft
hyphen, tag characters), lone surrogates (a byte that was not UTF-8) and the line and paragraph
separators, as the running Python's Unicode database classes them."""
ZERO_WIDTH_JOINER = "\u200d"
"""Kept: emoji sequences are built with it, and it moves nothing."""
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return _NAMED.get(char) or f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def hidden(char: str) -> bool:
    """True for a character a terminal would obey, or that hides or reorders text."""
    return char != ZERO_WIDTH_JOINER and unicodedata.category(char) in _HIDDEN_CATEGORIES


def visible(text: str, *, newlines: bool = True) -> str:
    """`text` safe to write to a terminal: every control character shown as its escape (`\\x1b`).

    A newline stays one where the layout allows it (`newlines`), else it is shown as `\\n` too.
    Ordinary text (printable characters, tabs aside) comes back unchanged.
    """
    if text.isascii():
        shown = _CONTROLS.sub(lambda match: _escape(match.group()), text)
        return shown if newlines else shown.replace("\n", "\\n")
    return "".join(
        _escape(char) if (char != "\n" or not newlines) and (char == "\n" or hidden(char)) else char
        for char in text
    )


def json_visible(text: str) -> str:
    """JSON text with what `json.dumps(..., ensure_ascii=False)` writes raw and a terminal obeys or
    hides (DEL, the C1 controls, the format characters and separators: json escapes the C0
    controls itself) as `\\uXXXX` escapes (surrogate pairs above U+FFFF), as `ensure_ascii` would
    write them: the same document to a reader, nothing a terminal obeys."""
    if text.isascii() and "\x7f" not in text:
        return text
    return "".join(_json_escape(char) if char >= "\x7f" and hidden(char) else char for char in text)


def _json_escape(char: str) -> str:
    code = ord(char)
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
