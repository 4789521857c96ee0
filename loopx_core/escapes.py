"""Text safe to show a person: what a terminal would obey rather than show, written as escapes.

Stored text (a title, an objective, a summary, a notice's body) is data, kept as given; every
place that shows it to a person (tables, Markdown, error lines, a notice sent through Apprise)
passes it through `visible`, the way `repr` writes a control character.
"""

from __future__ import annotations

import re

_INVISIBLE = r"[\x00-\x09\x0b-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069]"
"""What a terminal obeys rather than shows: C0 controls but a newline, DEL, C1 controls (`\\x9b`
is a CSI on its own), lone surrogates (a byte that was not UTF-8) and the bidi overrides that
reorder a line. Compiled on first use (re's cache), not by every command's start."""
_INVISIBLE_OR_NEWLINE = r"[\x00-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069]"


_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def visible(text: str, *, newlines: bool = True) -> str:
    """`text` safe to write to a terminal: every control character shown as its escape (`\\x1b`).

    A newline stays one where the layout allows it (`newlines`), else it is shown as `\\n` too.
    Ordinary text (printable characters, tabs aside) comes back unchanged.
    """
    return re.sub(_INVISIBLE if newlines else _INVISIBLE_OR_NEWLINE, _escape, text)
