"""`commands.quote` is `shlex.quote`: every next CLI action a packet lists is quoted as before.

A tick builds its next CLI actions with `commands.command`, which quotes each word without
importing shlex; the class is "a word as the shell must read it back", so generated words
(any text, quotes, spaces, non-ASCII, empty) must quote exactly as shlex does.
"""

from __future__ import annotations

import shlex

from hypothesis import given
from hypothesis import strategies as st

from loopx_core import commands

WORDS = st.text() | st.text(alphabet="ab'\" $_@%+=:,./-\\\n\té") | st.sampled_from(["", "'", "a b", "ü"])


@given(WORDS)
def test_quote_is_shlex_quote(word: str) -> None:
    assert commands.quote(word) == shlex.quote(word)


@given(st.lists(WORDS, max_size=4), st.dictionaries(st.sampled_from(["goal_id", "x_y"]), WORDS | st.none()))
def test_command_is_shlex_join(parts: list[str], options: dict[str, str | None]) -> None:
    words = ["loopx", *(p for p in parts if p)]
    for name, value in options.items():
        if value is not None:
            words += [f"--{name.replace('_', '-')}", value]
    assert commands.command(*parts, **options) == shlex.join(words)
