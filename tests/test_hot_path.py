"""The commands a host runs every tick: one definition, read by argparse or typer alike.

`quota should-run`, `hook NAME` and `heartbeat-prompt` are typer commands built from their
declarations (`cli.declare`); the fast entry (`cli.fast`) reads the same declarations with
argparse. Held here: each typer command's options are its declaration's; whatever argparse
takes, typer reads with the same values, and both entries print the same bytes and exit code;
anything else goes to typer. And a tick loads none of the heavy modules (typer, pydantic, the
template engine, the MCP SDK, filelock, the metadata scan).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopx_core.cli import fast
from loopx_core.cli.declare import FAST, Fast
from tests.builders import demo_project
from tests.conftest import run_loopx
from tests.probe import probe

HEAVY = (
    "typer",
    "click",
    "pydantic",
    "pydantic_core",
    "jinja2",
    "rich",
    "mcp",
    "tomlkit",
    "filelock",
    "psycopg",
    "dataclasses",
)
"""Modules no tick loads (filelock: a tick writes nothing under a lock; dataclasses: inspect)."""
WHO = ["-g", "demo", "-a", "builder"]
TICKS = {
    "should-run": ["quota", "should-run", *WHO],
    "should-run --surface codex-app": ["quota", "should-run", *WHO, "--surface", "codex-app"],
    "hook claude-stop": ["hook", "claude-stop", *WHO],
    "hook claude-session-start": ["hook", "claude-session-start", *WHO],
    "heartbeat-prompt --surface codex-app": ["heartbeat-prompt", *WHO, "--surface", "codex-app"],
}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return demo_project(tmp_path_factory.mktemp("hot"))


@pytest.mark.parametrize("tick", sorted(TICKS))
def test_a_tick_loads_none_of_the_heavy_modules(root: Path, tick: str) -> None:
    ran = probe(root, TICKS[tick], stdin="{}")
    assert ran.exit_code == 0
    renders = {"jinja2", "markupsafe"} if tick.startswith("heartbeat-prompt") else set()  # its template
    assert ran.tops(HEAVY) <= renders
    assert "importlib.metadata" not in ran.modules  # a built-in host is loaded by name
    assert ran.tops({"loopx_claude_code", "loopx_codex_app", "loopx_dsh"}) <= {
        "loopx_claude_code" if "claude" in tick else "loopx_codex_app"
    }


def test_should_run_without_a_surface_loads_no_plugin_at_all(root: Path) -> None:
    ran = probe(root, TICKS["should-run"])
    assert ran.tops({"pluggy", "loopx_claude_code", "loopx_codex_app", "loopx_dsh"}) == set()
    assert json.loads(ran.stdout)["decision"] == "run"


def _typer_command(declared: Fast) -> Any:
    import typer.main

    from loopx_core.cli.app import app

    command: Any = typer.main.get_command(app)
    ctx = command.make_context("loopx", [*declared.path, "--help"], resilient_parsing=True)
    for word in declared.path:
        command = command.get_command(ctx, word)
    return command


@pytest.mark.parametrize("declared", FAST, ids=lambda f: " ".join(f.path))
def test_each_typer_command_has_its_declarations_options(declared: Fast) -> None:
    params = {p.name: p for p in _typer_command(declared).params}
    options = {name: p for name, p in params.items() if p.param_type_name == "option"}
    assert set(options) == {o.dest for o in declared.options}
    for opt in declared.options:
        param = options[opt.dest]
        assert sorted(param.opts) == sorted(opt.names), opt.dest
        assert param.multiple == opt.many, opt.dest
        assert param.required == (opt.dest in declared.required), opt.dest
        assert param.help == opt.help, opt.dest
    arguments = [name for name, p in params.items() if p.param_type_name == "argument"]
    assert arguments == ([declared.argument] if declared.argument else [])


@pytest.mark.parametrize(
    "args",
    [
        ["quota", "should-run", "-g", "demo", "-a", "builder"],
        ["quota", "should-run", "--goal-id", "demo", "--agent-id=builder", "-f", "markdown"],
        ["quota", "should-run", *WHO, "-c", "shell", "--available-capability", "ssh"],
        ["quota", "should-run", *WHO, "--surface", "codex-app", "--format", "json"],
        ["quota", "should-run", *WHO, "--surface", "claude-code", "--format", "json"],
        ["quota", "should-run", *WHO, "--surface", "dsh", "--format", "json"],
        ["quota", "should-run", *WHO, "--surface", "no-such-host", "--format", "json"],
        ["quota", "should-run", "-g", "demo", "-a", "nobody"],
        ["quota", "should-run", "-g", "Bad", "-a", "builder"],
        ["heartbeat-prompt", *WHO, "--surface", "codex-app"],
        ["heartbeat-prompt", *WHO, "--surface", "codex-app", "--loopx-command", "/opt/my tools/loopx"],
        ["heartbeat-prompt", *WHO, "--surface", "nope"],
        ["heartbeat-prompt", "-g", "Bad", "-a", "builder", "--surface", "codex-app"],
        ["hook", "claude-session-start", *WHO],
        ["hook", "no-such-event", *WHO],
    ],
)
def test_the_fast_entry_answers_as_typer(root: Path, args: list[str]) -> None:
    assert fast.parse(args) is not None
    quick = run_loopx(*args, root=root, input="{}")
    slow = run_loopx(*args, root=root, input="{}", env={"LOOPX_NO_FAST_PATH": "1"})
    assert (quick.exit_code, quick.stdout, quick.stderr) == (slow.exit_code, slow.stdout, slow.stderr)
    assert "Traceback" not in quick.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["quota", "should-run", "--help"],
        ["quota", "should-run", "-g", "demo"],
        ["quota", "should-run", "-g", "demo", "-a", "x", "--bogus", "1"],
        ["quota", "should-run", "-g", "demo", "-a", "x", "-f", "yaml"],
        ["quota", "status", "-g", "demo"],
        ["goal", "list"],
        ["hook"],
        ["hook", "claude-stop", "-h"],
        ["hook", "a", "b"],
        ["hook", "claude-stop", "-g"],
        ["hook", "--", "claude-stop"],
        ["hooks"],
        ["heartbeat-prompt", "-g", "demo"],
        ["--version"],
        [],
    ],
)
def test_the_fast_entry_leaves_to_typer_what_is_not_a_tick(argv: list[str]) -> None:
    assert fast.parse(argv) is None


def test_what_typer_refuses_it_says(root: Path) -> None:
    result = run_loopx("quota", "should-run", *WHO, "--bogus", root=root)
    assert result.exit_code == 2 and "No such option" in result.stderr


OPTIONS = [
    *("-g", "--goal-id", "-a", "--agent-id", "-c", "--available-capability", "--surface"),
    *("--current-rrule", "-f", "--format", "--bogus", "-h", "--help", "--loopx-command"),
]
VALUES = ["d", "a", "demo", "", "-a", "--help", "x y", "json", "yaml", "markdown", "FREQ=HOURLY", "="]
TRAPS = ["--", "-", "-gd", "-g=d", "--version", "--root", "claude-stop", "x", ""]
PREFIXES = [
    ["hook"],
    ["quota", "should-run"],
    ["--root", "r", "hook"],
    ["--root=r", "quota", "should-run"],
    ["heartbeat-prompt"],
    ["--root", "r", "heartbeat-prompt"],
    ["--root", "-g", "heartbeat-prompt"],
    [],
]


@st.composite
def command_lines(draw: st.DrawFn) -> list[str]:
    """`loopx ...` words: a tick's command, what it needs, more options (spelled either way), traps."""
    prefix = draw(st.sampled_from(PREFIXES))

    def option(name: str | None = None) -> list[str]:
        name, value = name or draw(st.sampled_from(OPTIONS)), draw(st.sampled_from(VALUES))
        return draw(st.sampled_from([[name, value], [f"{name}={value}"], [name + value]]))

    groups = [[draw(st.sampled_from(["claude-stop", "x"]))]] if prefix[-1:] == ["hook"] else []
    groups += [option("-g"), option("-a")] if prefix[-1:] in (["should-run"], ["heartbeat-prompt"]) else []
    for _ in range(draw(st.integers(0, 3))):
        groups.append(option() if draw(st.booleans()) else [draw(st.sampled_from(TRAPS))])
    return prefix + [word for group in draw(st.permutations(groups)) for word in group]


def typer_parse(argv: list[str]) -> dict[str, Any] | None:
    """The values typer's own parser gives `loopx ARGV`'s command (and `root`), or None if it refuses."""
    import typer.main

    from loopx_core.cli.app import app

    group: Any = typer.main.get_command(app)
    try:
        ctx = group.make_context("loopx", list(argv))
        found = {"root": ctx.params["root"]}
        command, words = group, ctx._protected_args + ctx.args
        while hasattr(command, "resolve_command"):
            name, command, rest = command.resolve_command(ctx, words)
            ctx = command.make_context(name, rest, parent=ctx)
            words = ctx._protected_args + ctx.args
        return {**found, "path": ctx.command_path, **ctx.params}
    except BaseException:  # a usage error, help or --version: typer answers it, never the fast entry
        return None


@settings(max_examples=600, deadline=None)
@given(command_lines())
def test_whatever_argparse_takes_typer_reads_with_the_same_values(argv: list[str]) -> None:
    with mock.patch.dict(os.environ, clear=False):
        os.environ.pop("LOOPX_ROOT", None)
        quick, slow = fast.parse(argv), typer_parse(argv)
    if quick is None:
        return
    declared, values = quick
    assert slow is not None, argv
    assert slow["path"] == "loopx " + " ".join(declared.path), argv
    expected = {key: list(slow[key]) if isinstance(slow[key], tuple) else slow[key] for key in values}
    if "fmt" in expected:
        expected["fmt"] = str(expected["fmt"])
    assert values == expected, argv
