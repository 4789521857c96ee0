"""Class: `--check` on a damaged LoopX block reports drift (exit 9), never a conflict (exit 5).

A Markdown block whose markers were damaged by hand (an end marker gone, a begin marker gone
or doubled, the two swapped) is a facade that differs from what LoopX wrote: drift, as a JSON
or TOML file that no longer parses is. Install and uninstall still refuse to touch it (5).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.hosts.blocks import markers
from loopx_installer import merge
from tests.conftest import Cli

BEGIN, END = markers("codex-app")
DAMAGES = {
    "no end": lambda t: t.replace(END + "\n", ""),
    "no begin": lambda t: t.replace(BEGIN + "\n", ""),
    "two begins": lambda t: t.replace(BEGIN + "\n", BEGIN + "\n" + BEGIN + "\n"),
    "two ends": lambda t: t.replace(END + "\n", END + "\n" + END + "\n"),
    "swapped": lambda t: t.replace(BEGIN, "\0").replace(END, BEGIN).replace("\0", END),
}


@given(
    user=st.text(st.characters(codec="utf-8", exclude_characters="\r<>"), max_size=40),
    damage=st.sampled_from(sorted(DAMAGES)),
)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_has_markdown_reads_any_damaged_block_as_absent(user: str, damage: str) -> None:
    """`merge.has` answers False (drift) for every damaged block, whatever text surrounds it."""
    text = merge.merge_markdown(user or None, "the block", "codex-app")
    assert merge.has("markdown", text, merge.Fragment("the block"), "codex-app")
    broken = DAMAGES[damage](text)
    assert not merge.has("markdown", broken, merge.Fragment("the block"), "codex-app")


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_check_on_a_damaged_block_is_drift(damage: str, cli: Cli, tmp_path: Path) -> None:
    """The CLI: --check exits 9 naming AGENTS.md; uninstall stays a conflict (5) and writes nothing."""
    target = tmp_path / "proj"
    target.mkdir()
    args = ("--surface", "codex-app", "--target", str(target), "--loopx-command", "loopx")
    assert cli("workflow-skills", "--install", *args).exit_code == 0
    agents = target / "AGENTS.md"
    agents.write_text(DAMAGES[damage](agents.read_text()))
    checked = cli("workflow-skills", "--check", *args, "-f", "json")
    assert checked.exit_code == 9, checked.stdout + checked.stderr
    assert any(d["path"] == "AGENTS.md" for d in checked.json()["drift"])  # type: ignore[index]
    before = agents.read_bytes()
    assert cli("workflow-skills", "--uninstall", *args).exit_code == 5
    assert agents.read_bytes() == before
