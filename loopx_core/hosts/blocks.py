"""LoopX's marked block in a shared Markdown file (`FacadeFile(merge="markdown")`, e.g. `AGENTS.md`).

    <!-- loopx:begin codex-app -->
    ...the host's fragment...
    <!-- loopx:end codex-app -->

One block per host; everything outside the markers is the user's. The installer merges with
these functions and `Host.verify` reads blocks back with them: nothing else knows the format.
"""

from __future__ import annotations


def markers(owner: str) -> tuple[str, str]:
    """The begin and end marker lines of `owner`'s block."""
    return f"<!-- loopx:begin {owner} -->", f"<!-- loopx:end {owner} -->"


def span(text: str, owner: str) -> tuple[int, int] | None:
    """Where `owner`'s block is in `text` (from its begin marker to after its end marker's newline)."""
    begin, end = markers(owner)
    start = text.find(begin)
    if start < 0:
        return None
    stop = text.find(end, start)
    if stop < 0:
        return None
    stop += len(end)
    if text[stop : stop + 1] == "\n":
        stop += 1
    return start, stop


def body(text: str, owner: str) -> str | None:
    """The text inside `owner`'s block (stripped), None when there is no block."""
    found = span(text, owner)
    if found is None:
        return None
    begin, end = markers(owner)
    return text[found[0] + len(begin) : text.rindex(end, found[0], found[1])].strip()


def merge(current: str | None, block: str, owner: str) -> str:
    """`current` with `owner`'s block replaced, or appended after a blank line."""
    begin, end = markers(owner)
    marked = f"{begin}\n{block.rstrip()}\n{end}\n"
    text = current or ""
    found = span(text, owner)
    if found is not None:
        return text[: found[0]] + marked + text[found[1] :]
    if not text:
        return marked
    return text + "\n" + marked  # one newline, always: unmerge can take exactly it back


def unmerge(current: str, owner: str) -> str | None:
    """`current` without `owner`'s block (and the newline that introduced it); None when nothing is left."""
    found = span(current, owner)
    if found is None:
        return current
    before, after = current[: found[0]], current[found[1] :]
    if before.endswith("\n"):
        before = before[:-1]  # the newline merge put before the block
    text = before + after
    return text if text.strip() else None
