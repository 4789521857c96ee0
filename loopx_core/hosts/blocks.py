"""LoopX's marked block in a shared Markdown file (`FacadeFile(merge="markdown")`, e.g. `AGENTS.md`).

    <!-- loopx:begin codex-app -->
    ...the host's fragment...
    <!-- loopx:end codex-app -->

One block per host; everything outside the markers is the user's. The installer merges with
these functions and `Host.verify` reads blocks back with them: nothing else knows the format.
"""

from __future__ import annotations

from loopx_core.errors import ConflictError


def markers(owner: str) -> tuple[str, str]:
    """The begin and end marker lines of `owner`'s block."""
    return f"<!-- loopx:begin {owner} -->", f"<!-- loopx:end {owner} -->"


def _marker_lines(text: str, owner: str) -> list[tuple[bool, int, int]]:
    """Each whole line of `text` that is one of `owner`'s markers: (is begin, its start, its end).

    A marker counts only as a line of its own (surrounding spaces and a `\r` aside): one quoted
    inside a sentence or a code span is the user's text.
    """
    begin, end = markers(owner)
    if begin not in text and end not in text:
        return []
    found, at = [], 0
    for line in text.splitlines(keepends=True):
        if (stripped := line.strip()) in (begin, end):
            found.append((stripped == begin, at, at + len(line)))
        at += len(line)
    return found


def damage(text: str, owner: str) -> str | None:
    """What is wrong with `owner`'s block in `text`, None when it is whole or absent.

    Whole is one begin marker line, then one end marker line; anything else (a begin without
    its end, an end alone, two blocks) leaves no safe way to tell LoopX's text from the user's.
    """
    kinds = [is_begin for is_begin, _, _ in _marker_lines(text, owner)]
    if kinds in ([], [True, False]):
        return None
    if kinds == [True]:
        return "a begin marker without its end"
    if kinds == [False]:
        return "an end marker without its begin"
    if kinds.count(True) > 1:
        return f"{kinds.count(True)} begin markers"
    return "its markers out of order"


def span(text: str, owner: str) -> tuple[int, int] | None:
    """Where `owner`'s block is in `text` (its begin marker line to its end marker line, both whole).

    None when there is no block, or a damaged one (see `damage`).
    """
    found = _marker_lines(text, owner)
    if [is_begin for is_begin, _, _ in found] != [True, False]:
        return None
    return found[0][1], found[1][2]


def body(text: str, owner: str) -> str | None:
    """The text inside `owner`'s block (stripped), None when there is no whole block."""
    found = _marker_lines(text, owner)
    if [is_begin for is_begin, _, _ in found] != [True, False]:
        return None
    return text[found[0][2] : found[1][1]].strip()


def _refuse_damaged(text: str, owner: str) -> None:
    why = damage(text, owner)
    if why is not None:
        begin, end = markers(owner)
        raise ConflictError(
            f"its LoopX block for {owner} is damaged ({why}); left unchanged: keep one `{begin}` "
            f"line and one `{end}` line after it, or neither, then run it again"
        )


def merge(current: str | None, block: str, owner: str) -> str:
    """`current` with `owner`'s block replaced, or appended after a blank line.

    ConflictError for a damaged block: a second block would be appended after the first's
    begin marker, and taking it out later would take the user's text between them too.
    """
    begin, end = markers(owner)
    marked = f"{begin}\n{block.rstrip()}\n{end}\n"
    text = current or ""
    _refuse_damaged(text, owner)
    found = span(text, owner)
    if found is not None:
        return text[: found[0]] + marked + text[found[1] :]
    if not text:
        return marked
    return text + "\n" + marked  # one newline, always: unmerge can take exactly it back


def unmerge(current: str, owner: str) -> str | None:
    """`current` without `owner`'s block (and the newline that introduced it); None when nothing is left.

    ConflictError for a damaged block (see `merge`).
    """
    _refuse_damaged(current, owner)
    found = span(current, owner)
    if found is None:
        return current
    before, after = current[: found[0]], current[found[1] :]
    if before.endswith("\n"):
        before = before[:-1]  # the newline merge put before the block
    text = before + after
    return text if text.strip() else None
