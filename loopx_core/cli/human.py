"""People's output on a terminal or in a pipe: text blocks and aligned tables, drawn by `rich`.

Only `--format human` (the default on a terminal) loads this module and rich; cli/output.py
decides the format and hands over its blocks. A table fits the width by giving way where it
breaks the fewest words (`_column_widths`), and one too narrow even for its header words is
shown as records, `header: value` a line (`_print_records`).
"""

from __future__ import annotations

import io
import sys

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text

from loopx_core.escapes import visible as shown

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def print_blocks(blocks: list[Any], terminal: bool) -> None:
    """Print text blocks as they are and tables (cli/output.Table) aligned by `rich`: colour and
    the terminal's width on a `terminal`, plain and unwrapped (up to 240 columns) in a pipe; no
    trailing spaces; a table too narrow for its header words as records."""
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        force_terminal=terminal,
        width=None if terminal else 240,
        highlight=False,
        emoji=False,
        markup=False,
        soft_wrap=True,
    )
    for index, block in enumerate(blocks):
        if index:
            console.print()
        if isinstance(block, str):
            console.print(Text(shown(block.rstrip("\n"))))
            continue
        if not block.rows and block.empty:
            console.print(Text(shown(block.empty)))
            continue
        title = Text(shown(block.title, newlines=False)) if block.title else None
        headers = [shown(h, newlines=False) for h in block.headers]
        cells = [[type(block).cell(v) for v in row] for row in block.rows]
        room = console.width - 3 * (len(headers) - 1)
        if not _fits_whole_words(headers, room, cell_len):
            _print_records(console, title, headers, cells)
            continue
        table = RichTable(
            box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, title=title, title_justify="left"
        )
        widths = _column_widths(headers, cells, room, cell_len)
        for index, header in enumerate(headers):
            table.add_column(
                Text(header, style="bold"), overflow="fold", width=widths[index] if widths else None
            )
        for row in cells:
            table.add_row(*(Text(cell) for cell in row))
        console.print(table, soft_wrap=False)
    sys.stdout.write("".join(line.rstrip() + "\n" for line in buffer.getvalue().splitlines()))


def _fits_whole_words(headers: list[str], room: int, length: Callable[[str], int]) -> bool:
    """Whether the table's header words fit `room` side by side (cells may fold: see
    `_column_widths`); a terminal narrower than that gets records instead."""
    return sum(max(1, *map(length, header.split())) for header in headers) <= room


def _print_records(console: Console, title: Text | None, headers: list[str], rows: list[list[str]]) -> None:
    """A table too narrow for its header words, as one record a row: `header: value`, the first
    in bold, the others indented under it (what a terminal of a few dozen columns shows whole)."""
    if title is not None:
        console.print(title)
    for number, row in enumerate(rows):
        if number:
            console.print()
        console.print(Text(f"{headers[0]}: {row[0] if row else '-'}", style="bold"))
        for header, value in zip(headers[1:], row[1:], strict=False):
            console.print(Text(f"  {header}: {value}"))


def _column_widths(
    headers: list[str], rows: list[list[str]], room: int, length: Callable[[str], int]
) -> list[int] | None:
    """Column widths that fit `room` breaking as few words as it can, or None when the table
    fits as it is.

    Rich's own squeeze folds words evenly (`open/don` over `e`); here the widest columns give
    way first (all capped at one width), none below its least width: its longest word; when
    those cannot all fit, a free-text column's words (its cells have spaces) may fold, then a
    one-word column's (ids, states, times), a header's words never while they can fit at all.
    """
    columns = [[row[i] for row in rows if i < len(row)] for i in range(len(headers))]
    widest = [max(1, *map(length, [h, *c])) for h, c in zip(headers, columns, strict=True)]
    if sum(widest) <= room:
        return None
    words = [
        (h.split(), [w for v in c for w in v.split()], any(" " in v for v in c))
        for h, c in zip(headers, columns, strict=True)
    ]
    tiers = (
        [max(1, *map(length, h + c)) for h, c, _ in words],
        [max(1, *map(length, h + ([] if free else c))) for h, c, free in words],
        [max(1, *map(length, h)) for h, _, _ in words],
    )
    least = next((tier for tier in tiers if sum(tier) <= room), tiers[-1])

    def capped(cap: int) -> list[int]:
        return [max(low, min(high, cap)) for low, high in zip(least, widest, strict=True)]

    low, high = 0, max(widest)  # the widest cap that fits, by bisection (a cell may be huge)
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if sum(capped(middle)) <= room else (low, middle - 1)
    widths = capped(low)
    # What the cap left over makes whole the columns it can (the nearest first), then widens the widest.
    for index in sorted(range(len(widths)), key=lambda i: widest[i] - widths[i]):
        if widest[index] - widths[index] <= room - sum(widths):
            widths[index] = widest[index]
    for index in sorted(range(len(widths)), key=lambda i: -widest[i]):
        widths[index] += max(0, min(room - sum(widths), widest[index] - widths[index]))
    return widths
