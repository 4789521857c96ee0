"""Class: a value that breaks a Markdown table (render.table, `status` and `history` under -f markdown).

Observed: a cell holding a newline ended its row early (the rest of the value became a line of
its own, outside the table) and the table's headers were not escaped. Here every generated
table is read back by a real GFM table parser (markdown-it-py, which `rich` brings): the text
is one table and nothing else, with one line per row, as many cells per row as headers, and
each cell's Markdown source is the value itself on one line.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from loopx_core.escapes import visible
from loopx_core.render import history_markdown, status_markdown, table

# What breaks tables: every Unicode line break, pipes, backslashes (an escape's own escape),
# code-span ticks, and the delimiter row's characters; then any character at all.
NASTY = list("|\\\n\r\t \v\f\x1c\x1d\x1e\x85\u2028\u2029\x00`-:#>")
TEXT = st.text(st.one_of(st.sampled_from(NASTY), st.characters(exclude_categories=("Cs",))), max_size=30)
VALUE = st.one_of(st.none(), TEXT, st.integers(), st.floats(allow_nan=False))


def shown(value: Any) -> str:
    """The cell text a value must read back as: on one line, whitespace runs as one space, blank as `-`."""
    text = "" if value is None else visible(" ".join(str(value).split()))
    return text or "-"  # a control character (NUL too) is shown as its escape


def read_table(text: str) -> list[list[str]]:
    """The rows (headers first) a GFM parser reads; fails unless `text` is exactly one table."""
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    assert tokens and tokens[0].type == "table_open" and tokens[-1].type == "table_close", text
    assert [t.type for t in tokens].count("table_open") == 1, text
    rows: list[list[str]] = []
    for index, token in enumerate(tokens):
        if token.type == "tr_open":
            rows.append([])
        elif token.type in ("th_open", "td_open"):
            rows[-1].append(tokens[index + 1].content)
    return rows


def assert_one_line_per_row(text: str, rows: int) -> None:
    """Headers, delimiter, then one line per row: each starts and ends with a pipe."""
    lines = text.split("\n")
    assert lines[-1] == "" and len(lines) == rows + 3, text
    assert all(line.startswith("| ") and line.endswith(" |") for line in lines[:1] + lines[2:-1]), text


@settings(max_examples=300, deadline=None)
@given(
    headers=st.lists(TEXT, min_size=1, max_size=5),
    data=st.data(),
)
def test_any_values_read_back_as_the_same_cells(headers: list[str], data: st.DataObject) -> None:
    width = len(headers)
    rows = data.draw(st.lists(st.lists(VALUE, min_size=width, max_size=width), max_size=5))
    text = table(headers, rows)
    assert_one_line_per_row(text, len(rows))
    assert read_table(text) == [[shown(h) for h in headers]] + [[shown(v) for v in row] for row in rows]


def test_a_title_with_a_newline_stays_in_its_row() -> None:
    text = table(["todo", "title"], [["t1", "first line\nsecond | line"], ["t2", "ok"]])
    assert text.splitlines()[2:] == ["| t1 | first line second \\| line |", "| t2 | ok |"]


STATUS_KEYS = ("goal_id", "state", "who_acts", "next_eligible_at", "reason")


@settings(max_examples=100, deadline=None)
@given(goals=st.lists(st.fixed_dictionaries({k: TEXT for k in STATUS_KEYS}), min_size=1, max_size=4))
def test_status_markdown_keeps_one_row_per_goal(goals: list[dict[str, Any]]) -> None:
    rows = [
        {**g, "todos_open": 1, "todos_done": 2, "spent_slots": None, "allowed_slots": 3,
         "last_run": {"at": "2026-11-29T12:00:00Z", "agent_id": "a", "summary": g["reason"]}}
        for g in goals
    ]  # fmt: skip
    text = status_markdown(rows).removeprefix("# LoopX status\n\n")
    assert_one_line_per_row(text, len(rows))
    read = read_table(text)[1:]
    assert [(r[0], r[6]) for r in read] == [(shown(g["goal_id"]), shown(g["reason"])) for g in goals]
    assert all(len(r) == 8 for r in read)


@settings(max_examples=100, deadline=None)
@given(summaries=st.lists(TEXT, min_size=1, max_size=4), todo=TEXT)
def test_history_markdown_keeps_one_row_per_run(summaries: list[str], todo: str) -> None:
    runs = [
        {"at": "2026-11-29T12:00:00Z", "goal_id": "g", "agent_id": "a", "todo_id": todo,
         "validation": "passed", "progress": "todo_worked", "progress_detail": s, "summary": s}
        for s in summaries
    ]  # fmt: skip
    text = history_markdown(runs).removeprefix("# LoopX history\n\n")
    assert_one_line_per_row(text, len(runs))
    read = read_table(text)[1:]
    assert [r[6] for r in read] == [shown(s) for s in summaries]
    assert all(len(r) == 7 for r in read)
