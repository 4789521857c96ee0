"""Class: a host's text on a hook's stderr line carries control characters.

Observed (H4, session 11): `loopx hook NAME` wrote a plugin's `HookAnswer.stderr` and the text
of a plugin's refusal (a ValueError) raw on its `loopx: hook NAME: ...` line, only whitespace
folded: an ESC reached the terminal, which obeyed it, and a lone surrogate could not be
written at all. Fixed in cli/hooks.py `one_line`: whitespace runs fold to one space and every
other control character is shown as its escape (`escapes.visible`, as the other error lines).

Proved with generated text holding every control class: `one_line` directly (many examples),
and end to end through a real third-party plugin (a dist-info folder with an entry point)
that answers with the text on stderr or refuses with it: one line, no raw control character,
the text still there, escaped.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.cli.hooks import one_line
from loopx_core.escapes import visible
from tests.builders import distribution
from tests.conftest import Cli

RAW = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069]")
"""A character a terminal obeys rather than shows, a newline included (the line is one line)."""
CONTROLS = [chr(c) for c in (*range(0x20), *range(0x7F, 0xA0))] + [
    "\ud800",
    "\udc9b",
    "\u202e",
    "\u2066",
    "\u2069",
    "\x1b[31m",
    "\x1b]0;pwned\x07",
    "\x9b2J",
    "\r\x1b[K",
]
ORDINARY = st.text(st.characters(exclude_categories=("Cc", "Cs", "Zl", "Zp")), max_size=5)
TEXT = st.lists(st.tuples(ORDINARY, st.sampled_from(CONTROLS)), min_size=1, max_size=4).map(
    lambda parts: "x" + "".join(a + b for a, b in parts) + "y"
)
"""Text holding at least one control character (or escape sequence) between ordinary text."""

PLUGIN = """
import json
import os

from loopx_core.hosts import HookAnswer, Host, hookimpl


class Noisy(Host):
    name = "noisy-ide"
    title = "Noisy IDE"
    events = ("noisy-event",)

    def render(self, context):
        return []

    def handle_hook_event(self, event, call):
        with open(os.environ["NOISY_TEXT"], encoding="utf-8") as file:
            said = json.load(file)
        if said["how"] == "refuse":
            raise ValueError(said["text"])
        return HookAnswer(stderr=said["text"])


@hookimpl
def loopx_register_hosts(register):
    register(Noisy())
"""


@given(TEXT)
def test_one_line_shows_every_control_character_as_its_escape(text: str) -> None:
    line = one_line(text)
    assert RAW.search(line) is None, line
    assert line == visible(" ".join(text.split()), newlines=False)


@given(st.text(st.characters(exclude_categories=("Cc", "Cs", "Cf")) | st.sampled_from(" \t\n\r\x0b\x0c")))
def test_ordinary_text_is_only_folded(text: str) -> None:
    """No control character but whitespace: the bytes are what they were before the fix."""
    assert one_line(text) == " ".join(text.split())


@pytest.fixture
def noisy(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, cli: Cli) -> Cli:
    """`cli` with the noisy plugin installed as a distribution."""
    site = tmp_path_factory.mktemp("site")
    (site / "noisy_host.py").write_text(PLUGIN)
    distribution(site, "noisy-host", "[loopx]\nnoisy-ide = noisy_host\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "noisy_host", raising=False)
    monkeypatch.setenv("NOISY_TEXT", str(site / "said.json"))
    assert cli("init").exit_code == 0
    return cli


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXT, how=st.sampled_from(["say", "refuse"]))
def test_a_hooks_stderr_line_never_carries_a_raw_control_character(noisy: Cli, text: str, how: str) -> None:
    Path(os.environ["NOISY_TEXT"]).write_text(json.dumps({"how": how, "text": text}), encoding="utf-8")
    result = noisy("hook", "noisy-event", input="{}")
    assert result.exit_code == (1 if how == "refuse" else 0), result.stderr
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("loopx: hook noisy-event: ")
    assert RAW.search(result.stderr[:-1]) is None, result.stderr
    assert one_line(text)[:100] in result.stderr  # the text is still there, escaped
