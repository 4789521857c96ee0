"""Regexes the hot path compiles, built from code frozen ahead of time: no `import re`.

`import re` costs a hook about 1.5 ms, and the `enum` it pulls in (for `RegexFlag`) 2.9 ms
more, of a ~28 ms `loopx hook claude-stop`; compiling the ledger line's regex (822 characters)
costs another 0.6-1 ms. `compile(pattern)` instead hands `_sre.compile` the arguments
`re.compile(pattern)` would have computed, read from loopx_core/frozen_re_codes.py.

What makes the two equal: scripts/gen_frozen_re.py writes that table with re's own compiler,
from the patterns of the modules that own them, and records the interpreter it was made for;
the table is used only on that interpreter (implementation, version, `_sre.MAGIC` and
`_sre.CODESIZE` all equal) and otherwise, or for a pattern not in it, `re.compile` answers.
tests/test_frozen_re.py checks the table is current and that each pattern built from it equals
`re.compile`'s (Pattern equality compares the code) and matches as it does.
"""

from __future__ import annotations

import _sre
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    import re
    from typing import Any

_compiled: dict[str, re.Pattern[str]] = {}
_frozen: dict[str, Any] | None = None
"""The table's entries when it was made for this interpreter, else {}; None until first needed."""


def _made_here(table: Any) -> bool:
    """True when `table` (the generated module) was made for the running interpreter."""
    return (
        sys.implementation.name == table.IMPLEMENTATION
        and tuple(table.VERSION) == tuple(sys.version_info[:2])
        and table.MAGIC == _sre.MAGIC
        and table.CODESIZE == _sre.CODESIZE
    )


def _table() -> dict[str, Any]:
    """The frozen entries this interpreter may use (read once)."""
    global _frozen
    if _frozen is None:
        try:
            from loopx_core import frozen_re_codes as table
        except ImportError:  # pragma: no cover - the table ships with the package
            _frozen = {}
        else:
            _frozen = table.TABLE if _made_here(table) else {}
    return _frozen


def _built(pattern: str) -> re.Pattern[str] | None:
    """`pattern` built by `_sre.compile` from its frozen arguments, or None when it cannot be."""
    entry = _table().get(pattern)
    if entry is None:
        return None
    flags, code, groups, groupindex, indexgroup = entry
    try:
        return _sre.compile(pattern, flags, list(code), groups, dict(groupindex), tuple(indexgroup))
    except Exception:  # any refusal (a code _sre does not validate, a changed signature): re decides
        return None


def compile(pattern: str) -> re.Pattern[str]:
    """The pattern `re.compile(pattern)` gives, without importing `re` when `pattern` is frozen."""
    found = _compiled.get(pattern)
    if found is None:
        found = _built(pattern)
        if found is None:
            import re

            found = re.compile(pattern)
        _compiled[pattern] = found
    return found
