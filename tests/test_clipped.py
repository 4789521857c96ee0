"""Class: a message shortened to fit reads as shortened, never as a word cut off.

`escapes.clipped` shortens the texts LoopX caps (the summary of sinks that refused a test
notice, a sink's error, a notice's body): at most the limit, whole words, an ellipsis where it
cut. Proved on generated texts and limits, and through `notify test` with enough failing
sinks that its exit-7 summary must be shortened.
"""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from loopx_core.errors import ExitCode
from loopx_core.escapes import ELLIPSIS, clipped
from tests.conftest import Cli, Project

WORDS = st.lists(st.text(st.characters(exclude_characters=" "), min_size=1, max_size=15), max_size=40).map(
    " ".join
)
TEXTS = st.one_of(WORDS, st.text(max_size=400))


@given(TEXTS, st.integers(0, 320))
def test_a_clipped_text_fits_and_is_the_text_s_beginning(text: str, limit: int) -> None:
    shown = clipped(text, limit)
    assert len(shown) <= limit
    if len(text) <= limit:
        assert shown == text
    else:
        assert shown.endswith(ELLIPSIS) or limit == 0
        assert text.startswith(shown.removesuffix(ELLIPSIS))


@given(WORDS, st.integers(20, 320))
def test_a_clipped_text_cuts_between_words_when_a_space_is_near(text: str, limit: int) -> None:
    shown = clipped(text, limit).removesuffix(ELLIPSIS)
    if len(text) <= limit:
        return
    kept = shown.split(" ")
    whole = text.split(" ")
    if " " in text[limit // 2 : limit - 1]:  # a space in the window's second half: no word is cut
        assert kept == whole[: len(kept)]
    assert kept[:-1] == whole[: len(kept) - 1]  # every word but the last is whole in any case


def test_notify_test_s_summary_of_many_failing_sinks_ends_in_whole_words(cli: Cli, project: Project) -> None:
    (project.root / "afile").write_text("a file where a folder goes")
    urls = [f"file://afile/notices-of-the-night-shift-{n:02d}.jsonl" for n in range(12)]
    for url in urls:
        added = cli("notify", "add", url, "-f", "json")
        assert added.exit_code == 0, added.stderr
    result = cli("notify", "test", "-f", "json")
    assert result.exit_code == ExitCode.REFUSED
    report = json.loads(result.stdout)  # one JSON document: the results (the error is stderr's line)
    full = "; ".join(f"{r['sink_id']}: {r['error']}" for r in report["results"])
    line = result.stderr.strip()
    assert line.count("\n") == 0 and line.endswith(ELLIPSIS)
    summary = line.split("did not take the test notice: ", 1)[1].removesuffix(ELLIPSIS)
    assert full.startswith(summary) and full[len(summary)] == " "  # cut before a space: a whole word
    assert str(Path(project.root)) not in line
