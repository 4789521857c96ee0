"""Class: a table on an 80-column terminal breaks a word (a header or an id folded mid-word).

Observed: `loopx status` at 80 columns printed its header as `todos` / `open/don` / `e`: rich,
squeezing eight columns into the width, folds words. `output.print_human` now gives each column
a width itself when the table is too wide: the widest column gives way first, down to its
longest word (of its header, or of its cells when each is one word), so only free text wraps,
between its words. Proved on generated tables of any shape that can fit, and on `loopx status`
itself on a pseudo-terminal 80 columns wide.
"""

from __future__ import annotations

import contextlib
import io
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len

from loopx_core.cli import output
from loopx_core.ops import gates, goals, todos
from tests.conftest import T0, Project
from tests.terminal import on_terminal

WORD = st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyz/0123456789"), min_size=1, max_size=10)
PHRASE = st.lists(WORD, min_size=1, max_size=6).map(" ".join)


def least(header: str, column: list[str]) -> int:
    """The narrowest a column may be without breaking a word: its longest one."""
    return max(len(word) for text in [header, *column] for word in text.split())


@st.composite
def tables(draw: st.DrawFn) -> tuple[list[str], list[list[str]]]:
    """Headers and rows (one-word and free-text columns) whose every word can fit in 80 columns."""
    width = draw(st.integers(2, 8))
    kinds = draw(st.lists(st.booleans(), min_size=width, max_size=width))
    headers = [draw(PHRASE) for _ in range(width)]
    rows = [[draw(PHRASE if free else WORD) for free in kinds] for _ in range(draw(st.integers(1, 4)))]
    fits = sum(least(h, [r[i] for r in rows]) for i, h in enumerate(headers)) + 3 * (width - 1) <= 80
    return (headers, rows) if fits else draw(st.nothing())


@settings(max_examples=150, deadline=None)
@given(table=tables())
def test_no_word_is_broken_at_80_columns(table: tuple[list[str], list[list[str]]]) -> None:
    headers, rows = table
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COLUMNS", "80")
        patch.setattr(output, "_stdout_is_terminal", lambda: True)
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            output.print_human(output.Table(headers, rows))
    plain = [strip_styles(line) for line in buffer.getvalue().splitlines()]
    assert all(cell_len(line) <= 80 for line in plain), plain
    lines_words = {w for line in plain for w in line.split()}
    for word in {w for text in headers + [c for r in rows for c in r] for w in text.split()}:
        assert word in lines_words, (word, plain)


def strip_styles(line: str) -> str:
    """The line without its SGR colour codes (what a person reads)."""
    return re.sub(r"\x1b\[[0-9;]*m", "", line)


def test_status_header_keeps_its_words_at_80_columns(project: Project) -> None:
    goals.add_goal(project.store, "demo", "Ship", T0)
    goals.add_goal(project.store, "later", "Wait", T0, compute=0.001)
    goals.register_agent(project.store, "builder", ["python"], T0)
    todos.add_todo(project.store, "demo", "Write parser", T0, required_capabilities=["python"])
    todos.add_todo(project.store, "later", "Later", T0)
    reason = "waiting for the upstream release of the parser library it builds on"
    gates.focus_wait(project.store, "later", reason, T0, for_minutes=90)  # a long reason and a time
    shown = [
        strip_styles(line) for line in on_terminal("status", root=project.root, columns=80)[1].splitlines()
    ]
    header = shown[: next(i for i, line in enumerate(shown) if line.startswith("\u2500"))]
    words = {w for line in header for w in line.split()}
    assert {
        "goal",
        "state",
        "who",
        "acts",
        "todos",
        "open/done",
        "slots",
        "next",
        "eligible",
        "reason",
    } <= words, shown
    assert {"last", "run"} <= words, shown
    assert all(cell_len(line) <= 80 for line in shown), shown


@settings(max_examples=100, deadline=None)
@given(table=st.tuples(st.lists(WORD, min_size=2, max_size=6), st.integers(1, 3)), columns=st.integers(8, 60))
def test_a_table_too_narrow_for_its_words_is_shown_as_records(
    table: tuple[list[str], int], columns: int
) -> None:
    """Where even the header words cannot fit side by side, each row is a record (`header: value`
    lines): every word shown whole, in its own row's record."""
    headers, count = table
    rows = [[f"{h}{n}" for h in headers] for n in range(count)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COLUMNS", str(columns))
        patch.setattr(output, "_stdout_is_terminal", lambda: True)
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            output.print_human(output.Table(headers, rows))
    plain = [strip_styles(line) for line in buffer.getvalue().splitlines()]
    if sum(map(len, headers)) + 3 * (len(headers) - 1) <= columns:
        return  # a table: test_no_word_is_broken_at_80_columns says how it folds
    assert [line for line in plain if line.startswith("  ")] == [
        f"  {h}: {r[i]}" for r in rows for i, h in enumerate(headers) if i
    ], plain
    assert [line for line in plain if line and not line.startswith("  ")] == [
        f"{headers[0]}: {r[0]}" for r in rows
    ]
