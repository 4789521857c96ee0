"""The conformance kit: the built-in hosts pass it, and every check fails on a plugin broken its way.

Each broken plugin (tests/broken_plugins/) runs through the whole suite in a pytester session,
registered in-process by overriding the `loopx_plugin_manager` fixture, exactly as a plugin
author would; the test asserts which checks fail and why.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import pytest

from loopx_core.conformance import HostConformance, checks

pytest_plugins = ["pytester", "loopx_core.pytest_plugin"]


class TestClaudeCode(HostConformance):
    """Claude Code: every declared case (the plugin layout exists in project scope only)."""

    host = "claude-code"


class TestCodexApp(HostConformance):
    """Codex App."""

    host = "codex-app"


class TestDsh(HostConformance):
    """DSH."""

    host = "dsh"


CHECKS = sorted(
    name for name, _ in inspect.getmembers(HostConformance, inspect.isfunction) if name.startswith("test_")
)

BROKEN: dict[str, tuple[set[str], str]] = {
    "bad_surface": ({"test_surface_is_declared"}, "is not kebab-case"),
    "undefined_variable": ({"test_renders_without_undefined_variables"}, "'agnet_id' is undefined"),
    "undefined_in_branch": ({"test_renders_without_undefined_variables"}, "'last_goal_id' is undefined"),
    "path_escape": (
        {
            "test_paths_stay_inside_the_target",
            # the installer refuses the path too, so nothing installs
            "test_uninstall_restores_an_empty_target",
            "test_uninstall_restores_foreign_content",
            "test_uninstall_keeps_user_edits",
            "test_reinstall_is_a_no_op",
            "test_check_is_clean_after_install",
        },
        "toy_home/../toy-notes.md: must not be empty or contain '', '.' or '..' parts",
    ),
    "missing_marker": ({"test_files_carry_a_provenance_marker"}, "toy_home/skills/loopx/SKILL.md has no"),
    "leftover_folder": (
        {"test_uninstall_restores_an_empty_target", "test_uninstall_restores_foreign_content"},
        ".toy-cache: left behind",
    ),
    "uncovered_keys": ({"test_uninstall_keeps_user_edits"}, "'toy': {'facade_version': 1}"),
    "timestamp": (
        {"test_reinstall_is_a_no_op", "test_check_is_clean_after_install"},
        "SKILL.md would be update",
    ),
    "wrong_verify": ({"test_check_is_clean_after_install"}, ": config.json: missing"),
    "bad_hints": ({"test_packet_hints_are_well_formed"}, "cli_args must be a non-empty list of strings"),
    "unparsable": ({"test_owned_files_parse"}, "toy_home/state.yaml is not valid YAML"),
}

CONFTEST = """
import pytest

from loopx_core.hosts.manager import get_plugin_manager
from tests.broken_plugins.{module} import plugin

pytest_plugins = ["loopx_core.pytest_plugin"]


@pytest.fixture
def loopx_plugin_manager():
    return get_plugin_manager(load_entrypoints=False, plugins=[("toy", plugin)])
"""

SUITE = """
from loopx_core.pytest_plugin import HostConformance


class TestToy(HostConformance):
    host = {host!r}
    known_issues = {known!r}
"""


@pytest.fixture
def run_suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Callable[..., dict[str, str]]:
    """Run the whole suite on `tests.broken_plugins.<module>`; returns failed test name -> failure text."""
    from tests.broken_plugins import bad_surface

    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # a bare pytest starts faster

    def run(module: str, known_issues: dict[str, str] | None = None) -> dict[str, str]:
        host = bad_surface.plugin.host.name if module == "bad_surface" else "toy"
        pytester.makeconftest(CONFTEST.format(module=module))
        pytester.makepyfile(test_toy=SUITE.format(host=host, known=known_issues or {}))
        recorder = pytester.inline_run(
            "-p", "no:cacheprovider", "-W", "ignore::pytest.PytestAssertRewriteWarning"
        )
        passed, skipped, failed = recorder.listoutcomes()
        assert len(passed) + len(skipped) + len(failed) == len(CHECKS), [r.nodeid for r in passed + failed]
        outcomes = {r.nodeid.rsplit("::", 1)[-1]: str(r.longrepr) for r in failed}
        outcomes.update({r.nodeid.rsplit("::", 1)[-1]: "xfailed" for r in skipped if hasattr(r, "wasxfail")})
        return outcomes

    return run


def test_every_check_has_a_broken_plugin() -> None:
    proven = set().union(*(failing for failing, _ in BROKEN.values()))
    assert proven == set(CHECKS)


def test_the_toy_plugin_passes_every_check(run_suite: Callable[..., dict[str, str]]) -> None:
    assert run_suite("toy") == {}


@pytest.mark.parametrize("module", sorted(BROKEN))
def test_a_broken_plugin_fails_its_check(run_suite: Callable[..., dict[str, str]], module: str) -> None:
    failing, why = BROKEN[module]
    failed = run_suite(module)
    assert set(failed) == failing
    assert any(why in text for text in failed.values()), failed


def test_known_issues_are_strict_xfails(run_suite: Callable[..., dict[str, str]]) -> None:
    known = {"test_reinstall_is_a_no_op": "bug 1", "test_check_is_clean_after_install": "bug 1"}
    assert run_suite("timestamp", known) == dict.fromkeys(known, "xfailed")
    fixed = run_suite("toy", {"test_reinstall_is_a_no_op": "bug 2"})  # passes now: strict says so
    assert (
        list(fixed) == ["test_reinstall_is_a_no_op"] and "XPASS(strict)" in fixed["test_reinstall_is_a_no_op"]
    )


def test_provenance_marker_rules() -> None:
    from loopx_core.hosts import FacadeFile

    marked = "---\nname: x\n---\n\n<!-- Generated by LoopX - do not edit. -->\n"
    assert checks.has_marker(FacadeFile("a/SKILL.md", marked))
    assert not checks.has_marker(
        FacadeFile("a/SKILL.md", "# Generated by LoopX\n")
    )  # a heading, not a comment
    assert checks.has_marker(FacadeFile("a.toml", "# generated by LoopX\nx = 1\n"))
    assert checks.has_marker(FacadeFile("a.json", "{}"))  # JSON has no comments
    assert checks.has_marker(FacadeFile("AGENTS.md", "text", merge="markdown"))  # the user's file
    assert not checks.has_marker(FacadeFile("lib/x.js", "export const x = 1;\n"))


def test_hint_rules() -> None:
    ack = {"ack_hint": {"cli_args": ["quota", "scheduler-ack", "--goal-id", "g", "--agent-id", "a"]}}
    assert checks.hint_problems(None) == [] and checks.hint_problems(ack) == []
    assert "not a loopx command" in checks.hint_problems({"x": {"cli_args": ["quota", "nope"]}})[0]
    assert (
        "No such option" in checks.hint_problems({"x": {"cli_args": ["quota", "scheduler-ack", "--bad"]}})[0]
    )
    assert "JSON-serialisable" in checks.hint_problems({"x": {1, 2}})[0]
    assert "bytes of JSON" in checks.hint_problems({"x": "y" * 2000})[0]
    assert "not a string" in checks.hint_problems({1: "x"})[0]
