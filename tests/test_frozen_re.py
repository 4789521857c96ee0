"""loopx_core.frozen_re builds exactly `re.compile`'s patterns, from a table that is kept current.

The table (loopx_core/frozen_re_codes.py) is what scripts/gen_frozen_re.py writes from the
patterns of the modules that own them; a changed pattern makes `--check` fail. Each frozen
pattern, built by `_sre.compile`, equals `re.compile`'s (Pattern equality compares the code)
and answers fullmatch, match and search as it does on strings built to nearly match. A pattern
not in the table, a table made for another interpreter, or a code `_sre` refuses falls back to
`re.compile`. A fresh process that compiles every frozen pattern never imports `re` or `enum`.
"""

from __future__ import annotations

import _sre
import ast
import importlib.util
import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from loopx_core import frozen_re, frozen_re_codes
from tests.lean_documents import SEEDS
from tests.probe import NO_COVERAGE, REPO


def _generator() -> ModuleType:
    """scripts/gen_frozen_re.py as a module (scripts/ is not a package)."""
    spec = importlib.util.spec_from_file_location("gen_frozen_re", REPO / "scripts" / "gen_frozen_re.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _generator()
PATTERNS: dict[str, list[str]] = GEN.collect()
"""Every pattern the hot path compiles, each with the names it is known by."""
PARAMS = [pytest.param(pattern, id=origins[0].rsplit(".", 1)[-1]) for pattern, origins in PATTERNS.items()]
LEDGER_LINES = [
    json.dumps(SEEDS["LedgerEvent"], separators=(",", ":")),
    '{"schema_version":1,"event_id":"ev-2","seq":7,"kind":"void","at":"2026-11-29T12:00:00.123456+05:30",'
    '"goal_id":"g.1","agent_id":"a_b","todo_id":"t-1","turn_instance_id":"ti","replan_obligation_id":"r",'
    '"effect_id":"e","slots":-3,"duration_seconds":1.5e-7,"voids_event_id":"ev-1","reason":"why not"}',
]
"""Canonical ledger lines (the test builders' seed event, and one with every optional field)."""
NEAR = '",:{}\\.-_+eEZT0123456789az\x00\n é'
"""Characters a near-miss is made of: the ledger line's punctuation, digits, edges of the id alphabet."""


def _fresh_state(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget what frozen_re read and built, for this test only."""
    monkeypatch.setattr(frozen_re, "_frozen", None)
    monkeypatch.setattr(frozen_re, "_compiled", {})


def _answers(compiled: re.Pattern[str], text: str) -> list[Any]:
    """What fullmatch, match and search make of `text`: each match's span, groups and named groups."""
    found: list[Any] = []
    for method in (compiled.fullmatch, compiled.match, compiled.search):
        match = method(text)
        found.append(None if match is None else (match.span(), match.groups(), match.groupdict()))
    return found


@st.composite
def _mutated(draw: st.DrawFn, base: st.SearchStrategy[str]) -> str:
    """A string of `base`, then up to three edits (insert, delete, replace, cut, repeat) and maybe framed."""
    text = draw(base)
    alphabet = st.sampled_from(sorted(set(text) | set(NEAR)))
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(text)))
        edit = draw(st.sampled_from(["insert", "delete", "replace", "cut", "repeat"]))
        if edit == "insert":
            text = text[:at] + draw(alphabet) + text[at:]
        elif edit == "delete":
            text = text[:at] + text[at + 1 :]
        elif edit == "replace":
            text = text[:at] + draw(alphabet) + text[at + 1 :]
        elif edit == "cut":
            text = text[:at]
        else:
            text = text[:at] + text[at : at + draw(st.integers(1, 8))] + text[at:]
    if draw(st.integers(0, 4)) == 0:  # something around it: search finds it, fullmatch does not
        text = draw(st.text(alphabet, max_size=3)) + text + draw(st.text(alphabet, max_size=3))
    return text


def _near_misses(pattern: str) -> st.SearchStrategy[str]:
    """Strings that match `pattern`, nearly match it, or are made of its own characters."""
    matching = st.from_regex(pattern, fullmatch=True)
    own = st.text(st.sampled_from(sorted(set(pattern) | set(NEAR))), max_size=80)
    bases = [matching, own]
    if '"event_id"' in pattern:  # the ledger line's: real lines too
        bases.append(st.sampled_from(LEDGER_LINES))
    return st.one_of(_mutated(st.one_of(bases)), own)


def test_the_table_is_current() -> None:
    """`gen_frozen_re.py --check` finds the committed table equal to what it would write."""
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "gen_frozen_re.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
    )
    assert (proc.returncode, proc.stderr) == (0, "")


def test_the_table_holds_exactly_the_hot_paths_patterns() -> None:
    """The table's patterns are the ones the owning modules define, the ledger line's among them."""
    from loopx_core.models import lean

    assert list(frozen_re_codes.TABLE) == list(PATTERNS)
    assert {form[0] for form in lean.LINE_FORMS.values()} <= set(frozen_re_codes.TABLE)


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda p: {k.replace("[0-5]", "[0-6]"): v for k, v in p.items()}, id="changed"),
        pytest.param(lambda p: {**p, "x+": ["a new pattern"]}, id="added"),
        pytest.param(lambda p: dict(list(p.items())[1:]), id="removed"),
        pytest.param(lambda p: dict(reversed(p.items())), id="reordered"),
    ],
)
def test_a_changed_pattern_list_makes_the_table_stale(
    change: Callable[[dict[str, list[str]]], dict[str, list[str]]], capsys: pytest.CaptureFixture[str]
) -> None:
    """`--check` on another pattern list exits 1 naming the stale file, and leaves the file alone."""
    before = GEN.TARGET.read_bytes()
    changed = change(PATTERNS)
    assert changed != PATTERNS or list(changed) != list(PATTERNS)
    assert GEN.run(check=True, patterns=changed) == 1
    assert capsys.readouterr().err == (
        "loopx_core/frozen_re_codes.py is stale: run python scripts/gen_frozen_re.py\n"
    )
    assert GEN.TARGET.read_bytes() == before


def test_a_source_that_is_gone_is_named() -> None:
    """A pattern's module without the attribute stops the generator with one line naming both."""
    with pytest.raises(SystemExit) as stop:
        GEN.collect([("loopx_core.ids", "NO_SUCH_PATTERN")])
    assert str(stop.value) == (
        "loopx_core.ids has no NO_SUCH_PATTERN: update SOURCES in scripts/gen_frozen_re.py"
    )


def test_the_generator_writes_the_same_table_again(tmp_path: Path) -> None:
    """Writing the table elsewhere gives the committed file byte for byte (deterministic), then checks fresh."""
    target = tmp_path / "frozen_re_codes.py"
    assert GEN.run(check=False, patterns=PATTERNS, target=target) == 0
    assert target.read_bytes() == GEN.TARGET.read_bytes()
    assert GEN.run(check=True, patterns=PATTERNS, target=target) == 0
    assert GEN.main(["--write-everything"]) == 2


def test_the_table_names_this_interpreter() -> None:
    """The committed table was made for the interpreter the suite runs on (else nothing is frozen)."""
    assert frozen_re._made_here(frozen_re_codes)
    table = frozen_re_codes
    made_for = (table.IMPLEMENTATION, table.VERSION, table.MAGIC, table.CODESIZE)
    running = (sys.implementation.name, tuple(sys.version_info[:2]), _sre.MAGIC, _sre.CODESIZE)
    assert made_for == running


@pytest.mark.parametrize("pattern", PARAMS)
def test_the_frozen_pattern_is_res(pattern: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The frozen code is re's compiler's now; the built pattern is built (not re's) and equals re's."""
    _fresh_state(monkeypatch)
    assert frozen_re_codes.TABLE[pattern] == GEN.frozen(pattern)
    built = frozen_re.compile(pattern)
    expected = re.compile(pattern)
    assert built is not expected  # made by _sre.compile from the table, not found in re's cache
    assert built == expected and hash(built) == hash(expected)
    assert (built.pattern, built.flags, built.groups, dict(built.groupindex)) == (
        expected.pattern,
        expected.flags,
        expected.groups,
        dict(expected.groupindex),
    )
    assert frozen_re.compile(pattern) is built  # cached in-process


def test_pattern_equality_sees_the_code(monkeypatch: pytest.MonkeyPatch) -> None:
    """Equality with re's pattern would catch a wrong code: one changed charset word makes them differ."""
    pattern = next(iter(PATTERNS))
    flags, code, groups, groupindex, indexgroup = GEN.frozen(pattern)
    at = code.index(67067904)  # the charset word of [0-9.] in the id pattern: still valid code
    wrong = (flags, (*code[:at], code[at] ^ 1, *code[at + 1 :]), groups, groupindex, indexgroup)
    monkeypatch.setattr(frozen_re, "_frozen", {pattern: wrong})
    monkeypatch.setattr(frozen_re, "_compiled", {})
    assert frozen_re.compile(pattern) != re.compile(pattern)


@pytest.mark.parametrize("pattern", PARAMS)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_the_frozen_pattern_matches_as_res(pattern: str, data: st.DataObject) -> None:
    """fullmatch, match and search give the same spans and groups as re's on near-miss strings."""
    text = data.draw(_near_misses(pattern))
    assert _answers(frozen_re.compile(pattern), text) == _answers(re.compile(pattern), text)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(LEDGER_LINES).flatmap(lambda line: _mutated(st.just(line))))
@example(LEDGER_LINES[0])
@example(LEDGER_LINES[1])
@example(LEDGER_LINES[0].replace('"ev-1"', '"ev..1"'))
def test_ledger_lines_match_as_res(line: str) -> None:
    """The ledger line's frozen regex reads real, and damaged, canonical lines as re's does."""
    from loopx_core.models import lean

    pattern = lean.LINE_FORMS["LedgerEvent"][0]
    assert _answers(frozen_re.compile(pattern), line) == _answers(re.compile(pattern), line)


OTHERS = [
    r"(?P<a>x)(?P<b>y)?(?:z|(?P=a))",
    r"(?i)Sha256:[0-9A-F]{2}",
    r"(?x) a b  # a comment",
    r"(?s)a.b",
    r"(?m)^a$",
    r"(?a)\w+\d*\s?",
    r"\bfoo\B",
    "é+[^\\W\\d]",
    r"a{2,}?b*?c+?",
    r"(a)(?(1)b|c)",
    r"(?<=x)y(?!z)",
    r"[\u2028-\u2029]",
]
"""Patterns the table does not hold, with flags, named groups, backreferences, lookarounds."""


@pytest.mark.parametrize("pattern", OTHERS)
def test_a_pattern_not_in_the_table_falls_back(pattern: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """`compile` of an unknown pattern is `re.compile`'s own object."""
    _fresh_state(monkeypatch)
    assert pattern not in frozen_re_codes.TABLE
    assert frozen_re.compile(pattern) is re.compile(pattern)


@pytest.mark.parametrize("pattern", OTHERS)
def test_the_generator_freezes_any_pattern_as_re_compiles_it(
    pattern: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What `frozen` computes, built by frozen_re, is re's pattern for flags, groups and names too."""
    monkeypatch.setattr(frozen_re, "_frozen", {pattern: GEN.frozen(pattern)})
    monkeypatch.setattr(frozen_re, "_compiled", {})
    built = frozen_re.compile(pattern)
    expected = re.compile(pattern)
    assert built is not expected and built == expected
    assert (built.flags, built.groups, dict(built.groupindex)) == (
        expected.flags,
        expected.groups,
        dict(expected.groupindex),
    )


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("IMPLEMENTATION", "pypy"),
        ("VERSION", (3, 12)),
        ("MAGIC", _sre.MAGIC + 1),
        ("CODESIZE", 8),
    ],
)
def test_a_table_for_another_interpreter_falls_back(
    name: str, value: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A table made elsewhere is not used: every pattern is re's own, with re's answers."""
    _fresh_state(monkeypatch)
    monkeypatch.setattr(frozen_re_codes, name, value)
    for pattern in PATTERNS:
        assert frozen_re.compile(pattern) is re.compile(pattern)
    line = LEDGER_LINES[1]
    for pattern in PATTERNS:
        assert _answers(frozen_re.compile(pattern), line) == _answers(re.compile(pattern), line)


def test_a_code_sre_refuses_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry `_sre.compile` raises on (an invalid code) gives re's pattern, not an error."""
    pattern = next(iter(PATTERNS))
    flags, _, groups, groupindex, indexgroup = GEN.frozen(pattern)
    monkeypatch.setattr(frozen_re, "_frozen", {pattern: (flags, (99999,), groups, groupindex, indexgroup)})
    monkeypatch.setattr(frozen_re, "_compiled", {})
    assert frozen_re.compile(pattern) is re.compile(pattern)


_PROBE = """\
import sys
import loopx_core.frozen_re
before = sorted(sys.modules)
from loopx_core.frozen_re import compile
for pattern in {patterns!r}:
    compile(pattern)
print(repr((before, sorted(sys.modules))))
"""


def test_compiling_every_frozen_pattern_imports_neither_re_nor_enum() -> None:
    """A fresh process: importing frozen_re loads no table; compiling them all loads it, not re or enum."""
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE.format(patterns=list(PATTERNS))],
        capture_output=True,
        text=True,
        env={**NO_COVERAGE, "PATH": ""},
        cwd=REPO,
        check=True,
    )
    before, after = (set(names) for names in ast.literal_eval(proc.stdout))
    assert "loopx_core.frozen_re_codes" not in before
    assert "loopx_core.frozen_re_codes" in after
    assert {"re", "enum", "typing", "sre_compile", "json"} & after == set()
