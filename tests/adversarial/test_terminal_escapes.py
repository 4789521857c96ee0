"""Class: text from input or from disk reaching a person's terminal carries control characters.

Observed: `loopx todo add --title $'evil\\e[31mRED'` stored the title as given (right: it is
data) and `loopx todo list -f human` then wrote a real ESC to the terminal, which obeyed it;
Markdown output and the `loopx: error:` line quoting input did the same. Fixed where text for
people is rendered (`cli/output.py`: tables, text blocks, the error and usage lines;
`render.py`): every C0 control but a newline, DEL, every C1 control, a lone surrogate and the
bidi overrides are shown as escapes (`\\x1b`), as `repr` would. JSON stays data, as stored.

Proved here with generated text holding every control class, written into every free-text
field on disk (objective, todo titles, blocked reason, gate title, focus reason, health
message, run summary) and given on the command line, through every human and Markdown
rendering that shows free text and the error lines: no raw control character reaches stdout
or stderr, and the text is still there, escaped.
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.escapes import visible
from loopx_core.ops import gates, goals, health, todos
from loopx_core.settlement.steps import TurnContext
from loopx_core.settlement.turns import begin_turn, record_host_phases, settle_steps
from tests.builders import SETTLE
from tests.conftest import T0, Cli, Project

RAW = re.compile(
    "["
    + "".join(
        chr(c)
        for c in range(0x110000)
        if c not in (0x0A, 0x200D) and unicodedata.category(chr(c)) in ("Cc", "Cs", "Cf", "Zl", "Zp")
    )
    .replace("\\", "\\\\")
    .replace("]", "\\]")
    .replace("^", "\\^")
    .replace("-", "\\-")
    + "]"
)
"""A character a terminal obeys rather than shows, or one that hides or reorders text (Unicode's
controls, surrogates, format characters and separators, from the running Python's own table; a
newline aside, which layouts use, and the zero-width joiner emoji are built with)."""

C0 = [chr(c) for c in range(0x20) if c != 0x0A]
C1 = [chr(c) for c in range(0x80, 0xA0)]
SURROGATES = ["\ud800", "\udc9b", "\udfff"]  # what a byte that is not UTF-8 becomes in argv
OTHER = [
    "\x7f",
    "\u202e",
    "\u2066",
    "\u2069",
    "\u200b",
    "\u200f",
    "\u061c",
    "\u2028",
    "\u2029",
    "\ufeff",
    "\U000e0041",
]
ESCAPES = ["\x1b[31m", "\x1b]0;pwned\x07", "\x1b[2J", "\x9b2J", "\x1bP1$r\x1b\\", "\r\x1b[K"]
ORDINARY = st.text(st.characters(exclude_categories=("Cc", "Cs")), max_size=5)


def free_text(controls: list[str]) -> st.SearchStrategy[str]:
    """Free text holding at least one of `controls` (or an escape sequence) between ordinary text."""
    control = st.one_of(st.sampled_from(controls), st.sampled_from(ESCAPES))
    parts = st.lists(st.tuples(ORDINARY, control), min_size=1, max_size=3)
    return parts.map(lambda found: "x" + "".join(a + b for a, b in found) + "y")


STORED = free_text(C0 + C1 + OTHER)
"""What a state file can hold (the reader refuses a lone surrogate's escape: invalid state)."""
GIVEN = free_text(C0 + C1 + OTHER + SURROGATES)
"""What a command line can hold."""

FIELDS = ("objective", "title1", "title2", "title3", "blocked", "gate", "wait", "health", "summary")
MARK = "MARK{}"


def build(project: Project) -> dict[Path, str]:
    """Every kind of free text, marked, through the real operations; the files that hold a mark."""
    s = project.store
    goals.add_goal(s, "g", MARK.format("objective"), T0)
    goals.add_goal(s, "h", "plain", T0)
    goals.register_agent(s, "builder", [], T0)
    for n, kind in ((1, "agent"), (2, "user"), (3, "agent")):
        todos.add_todo(s, "g", MARK.format(f"title{n}"), T0, kind=kind)  # type: ignore[arg-type]
    todos.add_todo(s, "h", MARK.format("title1"), T0)
    journal, _ = begin_turn(s, "g", "builder", T0, todo_id="t1")
    ctx = TurnContext(
        s,
        "g",
        "builder",
        journal.turn_key,
        lambda: T0,
        summary=MARK.format("summary"),
        validation_passed=True,
    )
    record_host_phases(ctx, {"adapter": "test", "status": "succeeded"})
    settle_steps(ctx, list(SETTLE), adapter="test")
    todos.block_todo(s, "g", "t3", MARK.format("blocked"), T0)
    gates.open_gate(s, "g", MARK.format("gate"), T0)
    gates.focus_wait(s, "g", MARK.format("wait"), T0, for_minutes=60)
    health.add_finding(s, "g", "mark", "low", MARK.format("health"))
    files = {p: p.read_text() for p in (project.root / ".loopx").rglob("*") if p.is_file()}
    return {p: text for p, text in files.items() if "MARK" in text and not p.name.endswith(".prev")}


def plant(files: dict[Path, str], text: str) -> None:
    """Write `text` into every marked field (as JSON escapes in a JSON file)."""
    for path, original in files.items():
        body = original
        for field in FIELDS:
            encoded = json.dumps(text)[1:-1] if path.suffix in (".json", ".jsonl") else text
            body = body.replace(MARK.format(field), encoded)
        path.write_text(body)


# (command, the field it shows): every command that prints stored free text for a person.
SHOWN = [
    (["goal", "list"], "objective"),
    (["goal", "show", "-g", "g"], "objective"),
    (["todo", "list", "-g", "g"], "title2"),
    (["todo", "show", "-g", "g", "-t", "t3"], "blocked"),
    (["status"], "summary"),
    (["history"], "summary"),
    (["health", "list"], "health"),
    (["quota", "should-run", "-g", "h", "-a", "builder"], "title1"),
]


@pytest.fixture
def planted(project: Project) -> dict[Path, str]:
    """The marked project's files (built once per test; each example plants its own text)."""
    return build(project)


def assert_safe(out: str, err: str, text: str, *, must_show: bool = True) -> None:
    """No raw control character in either stream, and the text shown escaped, not dropped."""
    assert not RAW.search(out), out
    assert not RAW.search(err), err
    # Whitespace controls fold into a space in a table cell; any other shows as its escape.
    first = next((c for c in text if RAW.match(c) and not c.isspace()), None)
    if must_show and first is not None:
        assert visible(first) in "".join((out + err).split()), (out, err)


@pytest.mark.parametrize("fmt", ["human", "markdown"])
@pytest.mark.parametrize(("command", "field"), SHOWN, ids=[" ".join(c[:2]) for c, _ in SHOWN])
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=STORED)
def test_stored_text_reaches_the_terminal_escaped(
    cli: Cli, planted: dict[Path, str], command: list[str], field: str, fmt: str, text: str
) -> None:
    plant(planted, text)
    result = cli(*command, "-f", fmt)
    assert result.exit_code == 0, result.stderr
    assert_safe(result.stdout, result.stderr, text)


@pytest.mark.parametrize(
    "command",
    [
        ["todo", "add", "-g", "h", "--title", "{}", "-f", "human"],
        ["todo", "add", "-g", "h", "--title", "{}", "-f", "markdown"],
        ["goal", "configure", "-g", "h", "-o", "{}", "-f", "human"],
        ["gate", "open", "-g", "h", "--title", "{}", "-f", "markdown"],
        ["goal", "show", "-g", "{}", "-f", "human"],
        ["todo", "show", "-g", "h", "-t", "{}", "-f", "markdown"],
        ["goal", "{}"],
        ["todo", "list", "-g", "h", "--{}", "-f", "human"],
        ["todo", "add", "-g", "h", "--kind", "{}", "--title", "t", "-f", "human"],
        ["agent", "register", "-a", "other", "-c", "{}", "-f", "human"],
        ["focus", "wait", "-g", "h", "--reason", "{}", "--for-minutes", "5", "-f", "markdown"],
        ["notify", "add", "file://{}.jsonl", "-f", "human"],
    ],
    ids=[
        "todo add human",
        "todo add markdown",
        "goal configure",
        "gate open",
        "bad goal id",
        "bad todo id",
        "unknown command",
        "unknown option",
        "bad choice",
        "agent register",
        "focus wait",
        "notify add",
    ],
)
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=GIVEN)
def test_given_text_and_error_lines_reach_the_terminal_escaped(
    cli: Cli, planted: dict[Path, str], command: list[str], text: str
) -> None:
    """Text on the command line: echoed back for a person, or quoted by the one error line."""
    result = cli(*(word.replace("{}", text) for word in command))
    # A lone surrogate cannot be stored (not UTF-8): the command fails, its error line safe too.
    assert result.exit_code in (0, 1, 2, 3), result.stderr
    assert_safe(result.stdout, result.stderr, text, must_show=result.exit_code == 0)


def test_an_error_line_quotes_input_escaped(cli: Cli, planted: dict[Path, str]) -> None:
    """The error line still says what was given: the control characters as their escapes."""
    bad_id = cli("goal", "show", "-g", "x\x1b[2J\x9b", "-f", "human")
    assert bad_id.exit_code == 2 and "x\\x1b[2J\\x9b" in bad_id.stderr
    unknown = cli("goal", "sh\x1b]0;t\x07")
    assert unknown.exit_code == 2 and "sh\\x1b]0;t\\x07" in unknown.stderr
    for result in (bad_id, unknown):
        assert_safe(result.stdout, result.stderr, "", must_show=False)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=STORED)
def test_json_output_stays_the_stored_text(cli: Cli, planted: dict[Path, str], text: str) -> None:
    """JSON is data: the control characters come back exactly as stored."""
    plant(planted, text)
    result = cli("goal", "show", "-g", "g", "-f", "json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["goal"]["objective"] == text


def test_ordinary_text_is_unchanged() -> None:
    """Printable text (accents, CJK, emoji joined by ZWJ, right-to-left script) is shown as given."""
    for text in ["héllo wörld", "日本語", "👩\u200d👩\u200d👧", "عربى", "tab-free `code` | pipe \\ back"]:
        assert visible(text) == text
    assert visible("a\nb") == "a\nb" and visible("a\nb", newlines=False) == "a\\nb"
    assert visible("\x1b[31m\x9b\x7f\udc9b\u202e\t") == "\\x1b[31m\\x9b\\x7f\\udc9b\\u202e\\t"


def test_visible_escapes_exactly_what_the_running_pythons_unicode_calls_invisible() -> None:
    """Every code point, by the running Python's Unicode database: whatever version it is."""
    for code in range(0x110000):
        char = chr(code)
        if char in "\n\u200d":
            assert visible(char) == char
            continue
        assert (visible(char) != char) == bool(RAW.fullmatch(char)), hex(code)


@settings(max_examples=300, deadline=None)
@given(
    data=st.recursive(
        st.text(), lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3)
    )
)
def test_json_output_is_the_same_document_with_nothing_a_terminal_obeys(data: object) -> None:
    """`--format json` prints UTF-8 as it is, but every control, format character and separator as
    `\\uXXXX` (json escapes C0 itself): json.loads reads back exactly the data."""
    from loopx_core.cli.output import dumps

    text = dumps(data)
    assert json.loads(text) == data
    assert not RAW.search(text), text
