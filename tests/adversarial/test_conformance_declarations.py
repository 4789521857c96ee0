"""Class: a host plugin broken in its declaration, its rendering or its hints fails the kit's check,
with every problem listed.

tests/test_conformance.py runs the whole kit (in pytester sessions) on one broken plugin per
check. This module drives the same check functions in-process on many more ways to break a
host, each a `Toy` (tests/broken_plugins/toy.py) with one thing changed: a name, title, case,
base, event or template folder the surface check must name; a render that raises, renders
nothing, names an unknown base, an absolute or backslashed path, or one file twice; hints that
are no dict, no JSON, too big, keyed by a non-string or holding `cli_args` that are no loopx
command; a JSON or TOML file that does not parse; and the tree diff the round-trip checks
print for a changed file.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from loopx_core.conformance import checks
from loopx_core.conformance.sandbox import Case, ConformanceError, Sandbox
from loopx_core.hosts import Base, FacadeFile, RenderContext
from loopx_core.hosts.manager import get_plugin_manager
from tests.broken_plugins.toy import Plugin, Toy


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[Any]:
    """A function making a sandbox for a `Toy` with `attrs` changed (class attributes or methods)."""
    with pytest.MonkeyPatch.context() as patch:

        def make(host: str = "toy", **attrs: Any) -> Sandbox:
            kind = type("Broken", (Toy,), attrs)
            pm = get_plugin_manager(load_entrypoints=False, plugins=[("toy", Plugin(kind()))])
            return Sandbox(tmp_path / "sandbox", pm, host, patch)

        yield make


def problems(check: Any, *args: Any) -> list[str]:
    """The problems `check(*args)` lists (it must fail)."""
    with pytest.raises(ConformanceError) as caught:
        check(*args)
    assert str(caught.value).startswith(f"{caught.value.check}:\n  - ")
    return caught.value.problems


def test_the_toy_passes_the_checks_driven_here(sandbox: Any) -> None:
    sb = sandbox()
    checks.check_surface(sb)
    checks.check_renders_strictly(sb, [Case()])
    checks.check_paths_inside(sb, [Case()])


DECLARATIONS: dict[str, tuple[dict[str, Any], list[str]]] = {
    "name": ({"name": "Toy-"}, ["name 'Toy-' is not kebab-case (a-z, 0-9, single dashes)"]),
    "title": ({"title": "   "}, ["title is empty"]),
    "no cases": ({"cases": ()}, ["no cases (use (('project', 'default'),))"]),
    "scope": (
        {"cases": (("global", "default"), ("user", "Snake_Layout"))},
        [
            "case ('global', 'default'): the scope is project or user, the layout kebab-case",
            "case ('user', 'Snake_Layout'): the scope is project or user, the layout kebab-case",
        ],
    ),
    "twice": ({"cases": (("project", "default"), ("project", "default"))}, ["a case is declared twice"]),
    "event": ({"events": ("stop", "Pre_Tool")}, ["event 'Pre_Tool' is not kebab-case"]),
    "base folders": (
        {"bases": (Base("toy_home", env=("TOY_HOME", "toy-dir"), default="/etc/toy", project="a/../b"),)},
        [
            "base 'toy_home': 'toy-dir' is no environment variable name",
            "base 'toy_home': default '/etc/toy' must be a relative folder inside",
            "base 'toy_home': project 'a/../b' must be a relative folder inside",
        ],
    ),
    "backslash": (
        {"bases": (Base("toy_home", env=("TOY_HOME",), default=".toy", project="a\\b"),)},
        ["base 'toy_home': project 'a\\\\b' must be a relative folder inside"],
    ),
}


@pytest.mark.parametrize("case", sorted(DECLARATIONS))
def test_a_broken_declaration_is_named_by_the_surface_check(sandbox: Any, case: str) -> None:
    attrs, expected = DECLARATIONS[case]
    sb = sandbox(host=attrs.get("name", "toy"), **attrs)
    assert problems(checks.check_surface, sb) == expected


def test_a_missing_template_folder_is_named(sandbox: Any, tmp_path: Path) -> None:
    sb = sandbox(templates=tmp_path / "gone")
    assert problems(checks.check_surface, sb) == [f"templates {tmp_path / 'gone'} is not a folder"]


def test_a_base_the_registry_refuses_is_the_surface_problem(sandbox: Any) -> None:
    sb = sandbox(bases=(Base("home"),))
    assert problems(checks.check_surface, sb) == [
        "host 'toy' declares the base 'home': use another snake_case name"
    ]


def test_a_host_nobody_declares_is_named_with_those_declared(sandbox: Any) -> None:
    sb = sandbox(host="ghost")
    assert problems(checks.check_surface, sb) == ["no plugin declares host 'ghost' (declared: toy)"]


def _raises(self: Toy, context: RenderContext) -> list[FacadeFile]:
    raise KeyError("agent")


def _nothing(self: Toy, context: RenderContext) -> list[FacadeFile]:
    return []


def _not_files(self: Toy, context: RenderContext) -> list[Any]:
    return [FacadeFile("a.md", "text", "toy_home"), "b.md"]


def _unknown_base(self: Toy, context: RenderContext) -> list[FacadeFile]:
    return [FacadeFile("a.md", "text", "codex_home")]


@pytest.mark.parametrize(
    ("render", "expected"),
    [
        (_raises, "rendering raised KeyError: 'agent'"),
        (_nothing, "no files rendered"),
        (_not_files, "rendering raised TypeError: render() returned a str, not a FacadeFile"),
        (
            _unknown_base,
            "rendering raised UsageError: toy: facade file 'a.md' has the unknown base 'codex_home'",
        ),
    ],
)
def test_a_render_that_fails_or_gives_nothing_is_named_for_every_variant(
    sandbox: Any, render: Any, expected: str
) -> None:
    sb = sandbox(render=render)
    found = problems(checks.check_renders_strictly, sb, [Case()])
    assert found and all(p.endswith(f": {expected}") for p in found)
    assert len(found) == len(checks.variants(Case()))


def _files(*files: FacadeFile) -> Any:
    def render(self: Toy, context: RenderContext) -> list[FacadeFile]:
        return list(files)

    return render


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (
            (FacadeFile("a\\b.md", "x", "toy_home"),),
            "project-default: toy_home/a\\b.md: must be a relative POSIX path",
        ),
        (
            (FacadeFile("/etc/a.md", "x", "toy_home"),),
            "project-default: toy_home//etc/a.md: must be a relative POSIX path",
        ),
        (
            (FacadeFile("a.md", "x", "toy_home"), FacadeFile("./a.md", "y", "toy_home")),
            "project-default: toy_home/./a.md: must not be empty or contain '', '.' or '..' parts",
        ),
    ],
)
def test_a_file_placed_wrong_is_named_by_the_paths_check(
    sandbox: Any, files: tuple[FacadeFile, ...], expected: str
) -> None:
    sb = sandbox(render=_files(*files))
    assert problems(checks.check_paths_inside, sb, [Case()]) == [expected]


def test_one_file_rendered_twice_is_named(sandbox: Any) -> None:
    sb = sandbox(render=_files(FacadeFile("a.md", "x", "toy_home"), FacadeFile("a.md", "y", "toy_home")))
    assert problems(checks.check_paths_inside, sb, [Case()]) == [
        "project-default: toy_home/a.md: the same file as toy_home/a.md"
    ]


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)


@given(st.one_of(st.integers(), st.text(), st.lists(JSONISH, max_size=2), st.tuples(st.integers())))
def test_hints_that_are_no_dict_are_one_problem(hints: Any) -> None:
    assert checks.hint_problems(hints) == [f"hints must be a dict or None, not {type(hints).__name__}"]


@given(st.dictionaries(st.text(max_size=6).filter(lambda k: k != "cli_args"), JSONISH, max_size=4))
def test_small_json_hints_without_cli_args_are_fine(hints: dict[str, Any]) -> None:
    assume(len(json.dumps(hints)) <= checks.HINTS_LIMIT)
    assert checks.hint_problems(hints) == []
    assert checks.hint_problems(None) == []


@pytest.mark.parametrize(
    ("hints", "expected"),
    [
        (
            {"x": math.nan},
            "hints are not JSON-serialisable: Out of range float values are not JSON compliant",
        ),
        ({"x": {1, 2}}, "hints are not JSON-serialisable: Object of type set is not JSON serializable"),
        ({"x": "y" * 2000}, f"hints take 2009 bytes of JSON (at most {checks.HINTS_LIMIT})"),
        ({"a": {1: "b"}}, "hints.a: key 1 is not a string"),
        ({"cli_args": []}, "hints.cli_args must be a non-empty list of strings, not []"),
        ({"cli_args": ["quota", 3]}, "hints.cli_args must be a non-empty list of strings, not ['quota', 3]"),
        (
            {"cli_args": ["quota"]},
            "hints.cli_args ['quota'] is not a loopx command: 'quota' names a command group, not a command",
        ),
        (
            {"n": {"cli_args": ["quota", "nope"]}},
            "hints.n.cli_args ['quota', 'nope'] is not a loopx command: 'quota nope' is not a loopx command",
        ),
        (
            {"cli_args": ["status", "--no-such"]},
            "hints.cli_args ['status', '--no-such'] is not a loopx command: No such option: --no-such",
        ),
    ],
)
def test_hints_broken_one_way_are_named_that_way(hints: dict[Any, Any], expected: str) -> None:
    (problem,) = checks.hint_problems(hints)
    assert problem.startswith(expected)  # json's own words may go on (Python 3.13 names the value)


@pytest.mark.parametrize(
    ("kind", "text"),
    [("json", '{"a": 1,}'), ("json", "[1, 2"), ("toml", "a = "), ("toml", "[table\nx = 1")],
)
def test_a_data_file_that_does_not_parse_is_named(kind: str, text: str) -> None:
    problem = checks.data_problem(kind, text, "toy_home/config")
    assert problem is not None and "toy_home/config" in problem and not problem.endswith("; left unchanged")
    assert checks.data_problem(kind, '{"a": 1}' if kind == "json" else "a = 1", "toy_home/config") is None


def test_the_tree_diff_names_what_was_left_gone_or_changed() -> None:
    before: dict[str, bytes | None] = {"a.md": b"one\ntwo\n", "gone.md": b"x", "dir": None}
    after: dict[str, bytes | None] = {"a.md": b"one\nthree\n", "new.md": b"y", "dir": None}
    assert checks.tree_diff(before, after) == [
        "new.md: left behind",
        "gone.md: gone",
        "a.md: changed\n      @@ -1,2 +1,2 @@\n       one\n      -two\n      +three",
    ]
    assert checks.tree_diff(before, dict(before)) == []
