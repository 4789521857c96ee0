"""Class: LoopX's marked block in a shared Markdown file (AGENTS.md) never takes the user's text.

Observed: an AGENTS.md whose LoopX block had lost its end marker (a hand edit, a bad merge)
was merged by appending a second whole block after the orphan begin marker; from then on
the "block" ran from the first begin to the new end, so `--uninstall` (or the next merge)
took out every line the user had written between them. A duplicated block passed `--check`
and one copy stayed after `--uninstall`; a marker quoted inside a sentence counted as one.

Now a marker counts only as a line of its own; a block is one begin line then one end line;
any other arrangement is damaged: merge and unmerge refuse it (a conflict, nothing written)
and the block reads as absent. Generated: documents of user lines, marker lines of this
host and another, markers inside sentences, CRLF endings.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loopx_core.errors import ConflictError
from loopx_core.hosts import blocks
from tests.conftest import Cli

OWNER, OTHER = "codex-app", "dsh"
BEGIN, END = blocks.markers(OWNER)
LINES = st.one_of(
    st.text(alphabet="ab #-*`<>!\t", max_size=12),
    st.sampled_from([BEGIN, END, *blocks.markers(OTHER), f"see `{BEGIN}` here", f"  {END}  ", BEGIN + "\r"]),
)
ENDINGS = st.sampled_from(["\n", "\r\n"])


@st.composite
def documents(draw: st.DrawFn) -> str:
    """A Markdown file as a user may leave it, often with this host's markers in it."""
    ending = draw(ENDINGS)
    text = ending.join(draw(st.lists(LINES, max_size=10)))
    return text + ending if text and draw(st.booleans()) else text


def _outside(text: str) -> str:
    found = blocks.span(text, OWNER)
    return text if found is None else text[: found[0]] + text[found[1] :]


@given(text=documents(), body=st.text(alphabet="xyz \n", min_size=1, max_size=20).filter(str.strip))
def test_a_merge_is_whole_and_keeps_every_user_line_or_refuses(text: str, body: str) -> None:
    damaged = blocks.damage(text, OWNER)
    if damaged is not None:
        assert blocks.span(text, OWNER) is None and blocks.body(text, OWNER) is None
        for change in (lambda: blocks.merge(text, body, OWNER), lambda: blocks.unmerge(text, OWNER)):
            with pytest.raises(ConflictError, match="damaged"):
                change()
        return
    merged = blocks.merge(text, body, OWNER)
    assert blocks.damage(merged, OWNER) is None
    assert blocks.body(merged, OWNER) == body.strip()
    before = _outside(text)
    assert _outside(merged) in (before, before + "\n")  # the user's text, and at most the one newline
    assert blocks.merge(merged, body, OWNER) == merged  # a second merge changes nothing
    taken = blocks.unmerge(merged, OWNER)
    assert blocks.span(taken or "", OWNER) is None and blocks.damage(taken or "", OWNER) is None
    if blocks.span(text, OWNER) is None:  # LoopX added the block: taking it out gives the file back
        assert (taken or "") == text or (taken is None and not text.strip())


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (f"# Mine\n{BEGIN}\nold\n# My notes\n", "a begin marker without its end"),
        (f"# Mine\n{END}\n", "an end marker without its begin"),
        (f"{BEGIN}\na\n{END}\n{BEGIN}\na\n{END}\n", "2 begin markers"),
        (f"{END}\n{BEGIN}\n", "its markers out of order"),
    ],
)
def test_each_damage_is_named(text: str, why: str) -> None:
    assert blocks.damage(text, OWNER) == why


def test_a_marker_inside_a_sentence_is_the_users_text() -> None:
    text = f"Do not delete the `{BEGIN}` line LoopX writes.\n"
    assert blocks.damage(text, OWNER) is None and blocks.span(text, OWNER) is None
    merged = blocks.merge(text, "body", OWNER)
    assert merged.startswith(text) and blocks.unmerge(merged, OWNER) == text


def test_a_crlf_file_keeps_its_block(cli: Cli) -> None:
    text = f"# Mine\r\n\r\n{BEGIN}\r\nold\r\n{END}\r\n# After\r\n"
    merged = blocks.merge(text, "new", OWNER)
    assert merged == f"# Mine\r\n\r\n{BEGIN}\nnew\n{END}\n# After\r\n"


def _install(cli: Cli, *extra: str) -> dict[str, object]:
    result = cli("workflow-skills", "-s", OWNER, *extra, "-g", "g", "-a", "a", "-f", "json")
    assert result.exit_code in (0, 5), result
    return json.loads(result.stdout)


def test_the_observed_case_the_users_notes_survive(cli: Cli) -> None:
    assert cli("goal", "add", "-g", "g", "-o", "o").exit_code == 0
    assert cli("agent", "register", "-a", "a").exit_code == 0
    agents = Path(cli.root) / "AGENTS.md"
    agents.write_text("# Mine\n")
    _install(cli, "--install")
    text = agents.read_text()
    agents.write_text(text[: text.index(END)] + "# My notes after a bad edit\n")  # the end marker lost
    damaged = agents.read_bytes()
    for operation in ("--install", "--uninstall"):
        report = _install(cli, operation)
        [row] = [f for f in report["files"] if f["path"] == "AGENTS.md"]  # type: ignore[union-attr]
        assert row["status"] == "conflict" and "a begin marker without its end" in row["detail"], row
        assert report["written"] is False
        assert agents.read_bytes() == damaged
