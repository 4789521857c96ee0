"""The hot path: the fast entry matches typer, and each hot command imports only what it may.

Every hot command (what hosts run on each heartbeat or stop) has a deterministic import list
below: the heavy modules it may load today. A regression (a new heavy import) fails a test, not
a stopwatch. Every hot command is at the floor issue 15 asks for (none of them); a command
that must leave it names its modules and the reason in HOT, which makes its floor test a strict
xfail until the floor is reached again.
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

from loopx_core.cli.entry import parse_fast, parse_heartbeat, parse_hook
from tests.builders import demo_project
from tests.conftest import run_loopx
from tests.probe import START_UP, probe

HEAVY = ("typer", "click", "jinja2", "tomlkit", "mcp", "pluggy", "rich")
FLOOR = ("pydantic", "pydantic_core", "typer", "click", "jinja2", "rich", "mcp", "tomlkit", "pluggy")
"""Modules no hot command should need (issue 15)."""
FLOOR_MODULES = ("importlib.metadata", "importlib.resources")
"""Submodules no hot command should need either: importlib.metadata (pluggy's entry-point
loader) costs more than a hook, and the built-in hosts load without it (hosts/builtin.py);
importlib.resources finds template folders, which no hot command renders."""
WHO = ["-g", "demo", "-a", "builder"]
HOT: dict[str, tuple[list[str], frozenset[str], str]] = {
    "quota should-run": (["quota", "should-run", *WHO], frozenset(), ""),
    "hook claude-stop": (["hook", "claude-stop", *WHO], frozenset(), ""),
    "hook claude-session-start": (["hook", "claude-session-start", *WHO], frozenset(), ""),
    "heartbeat-prompt": (["heartbeat-prompt", *WHO, "--surface", "codex-app"], frozenset(), ""),
    "heartbeat-prompt (no surface)": (["heartbeat-prompt", *WHO], frozenset(), ""),
    # what each host's heartbeat runs: should-run with its surface (the host's hints in the packet)
    **{
        f"quota should-run --surface {surface}": (
            ["quota", "should-run", *WHO, "--surface", surface],
            frozenset(),
            "",
        )
        for surface in ("codex-app", "claude-code", "dsh", "no-such-host")
    },
}
"""Each hot command: its arguments, the heavy modules it may import today, and why (empty: none)."""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return demo_project(tmp_path)


def heavy_imports(root: Path, argv: list[str]) -> set[str]:
    """The FLOOR (and FLOOR_MODULES, START_UP) modules one run of `loopx ARGV` (stdin `{}`) leaves loaded."""
    ran = probe(root, argv, stdin="{}")
    return ran.tops(FLOOR) | (ran.modules & {*FLOOR_MODULES, *START_UP})


@pytest.mark.parametrize("command", sorted(HOT))
def test_hot_command_imports_only_its_list(root: Path, command: str) -> None:
    argv, allowed, _ = HOT[command]
    assert heavy_imports(root, argv) <= allowed


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(c, marks=[pytest.mark.xfail(strict=True, reason=HOT[c][2])] if HOT[c][1] else [])
        for c in sorted(HOT)
    ],
)
def test_hot_command_imports_none_of_the_floor(root: Path, command: str) -> None:
    assert heavy_imports(root, HOT[command][0]) == set()


def test_should_run_reads_every_file_of_a_busy_tick_without_the_floor(root: Path) -> None:
    """An open turn (its journal), a scheduler entry and a ledger tail: all read the lean way."""
    begun = run_loopx("turn", "begin", *WHO, "--todo-id", "t1", root=root)
    assert begun.exit_code == 0, begun.stderr
    for args in (
        ["quota", "scheduler-ack", *WHO, "--rrule", "FREQ=HOURLY"],
        ["quota", "spend", *WHO, "--manual", "--slots", "1", "--turn-instance-id", "x"],
    ):
        assert run_loopx(*args, root=root).exit_code == 0, args
    store = root / ".loopx/goals/demo"
    assert (store / "scheduler.json").is_file() and (store / "events.jsonl").read_bytes().count(b"\n") == 1
    assert heavy_imports(root, HOT["quota should-run"][0]) == set()


@pytest.mark.parametrize("event", ["claude-stop", "claude-session-start"])
def test_a_hook_loads_only_the_plugin_of_its_host(root: Path, event: str) -> None:
    """LoopX's `loopx.events` table names the event's plugin: the other built-in plugins stay unloaded."""
    ran = probe(root, ["hook", event, *WHO], stdin="{}")
    assert ran.exit_code == 0
    assert ran.tops({"loopx_claude_code", "loopx_codex_app", "loopx_dsh"}) == {"loopx_claude_code"}
    assert "loopx_claude_code.plugin" in ran.modules


def test_should_run_imports_no_heavy_modules(root: Path) -> None:
    ran = probe(root, ["quota", "should-run", "-g", "demo", "-a", "builder"])
    assert ran.exit_code == 0 and ran.tops(HEAVY) == set()
    assert json.loads(ran.stdout)["decision"] == "run"


@pytest.mark.parametrize(
    "args",
    [
        ["-g", "demo", "-a", "builder"],
        ["--goal-id", "demo", "--agent-id=builder", "-f", "markdown"],
        ["-g", "demo", "-a", "builder", "-c", "shell", "--available-capability", "ssh"],
        ["-g", "demo", "-a", "builder", "--surface", "codex-app", "--format", "json"],
        ["-g", "demo", "-a", "builder", "--surface", "claude-code", "--format", "json"],
        ["-g", "demo", "-a", "builder", "--surface", "dsh", "--format", "json"],
        ["-g", "demo", "-a", "builder", "--surface", "no-such-host", "--format", "json"],
        ["-g", "demo", "-a", "builder", "--surface", "codex-app", "--format", "markdown"],
        ["-g", "demo", "-a", "nobody"],
        ["-g", "Bad", "-a", "builder"],
    ],
)
def test_fast_path_matches_typer(root: Path, args: list[str]) -> None:
    assert parse_fast(["quota", "should-run", *args]) is not None
    fast = run_loopx("quota", "should-run", *args, root=root)
    slow = run_loopx("quota", "should-run", *args, root=root, env={"LOOPX_NO_FAST_PATH": "1"})
    assert (fast.exit_code, fast.stdout, fast.stderr) == (slow.exit_code, slow.stdout, slow.stderr)


@pytest.mark.parametrize(
    "argv",
    [
        ["quota", "should-run", "--help"],
        ["quota", "should-run", "-g", "demo"],
        ["quota", "should-run", "-g", "demo", "-a", "x", "--bogus", "1"],
        ["quota", "should-run", "-g", "demo", "-g", "other", "-a", "x"],
        ["quota", "should-run", "-g", "demo", "-a", "x", "-f", "yaml"],
        ["quota", "status", "-g", "demo"],
        ["goal", "list"],
    ],
)
def test_fast_parser_defers_what_it_does_not_know(argv: list[str]) -> None:
    assert parse_fast(argv) is None


def test_deferred_errors_come_from_typer(root: Path) -> None:
    result = run_loopx("quota", "should-run", "-g", "demo", "-a", "builder", "--bogus", root=root)
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
    ["--root", "r", "quota", "should-run"],
    ["heartbeat-prompt"],
    ["--root", "r", "heartbeat-prompt"],
    ["--root", "-g", "heartbeat-prompt"],
    [],
]


@st.composite
def command_lines(draw: st.DrawFn) -> list[str]:
    """`loopx ...` words: a hot command, what it needs, more options (spelled either way), traps."""
    prefix = draw(st.sampled_from(PREFIXES))

    def option(name: str | None = None) -> list[str]:
        name, value = name or draw(st.sampled_from(OPTIONS)), draw(st.sampled_from(VALUES))
        return draw(st.sampled_from([[name, value], [f"{name}={value}"]]))

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
    except BaseException:  # a usage error, help or --version: typer answers it, never the fast path
        return None


@settings(max_examples=500, deadline=None)
@given(command_lines())
def test_fast_parsers_read_what_typer_reads(argv: list[str]) -> None:
    """Whatever a fast parser accepts, typer accepts too, with the same values (else it defers)."""
    with mock.patch.dict(os.environ, clear=False):
        os.environ.pop("LOOPX_ROOT", None)
        hook, run, beat, slow = parse_hook(argv), parse_fast(argv), parse_heartbeat(argv), typer_parse(argv)
    assert [hook, run, beat].count(None) >= 2
    if beat is not None:
        assert slow is not None and slow["path"] == "loopx heartbeat-prompt", argv
        assert beat == {k: slow[k] for k in ("goal_id", "agent_id", "surface", "loopx_command", "root")}, argv
    if hook is not None:
        assert slow is not None and slow["path"] == "loopx hook", argv
        assert hook == {k: slow[k] for k in ("name", "goal_id", "agent_id", "root")}, argv
    if run is not None:
        assert slow is not None and slow["path"] == "loopx quota should-run", argv
        expected = {
            "root": slow["root"],
            "goal_id": slow["goal_id"],
            "agent_id": slow["agent_id"],
            "capability": slow["available_capability"] or [],
            "format": slow["fmt"].value,
            "surface": slow["surface"],
            "current_rrule": slow["current_rrule"],
        }
        assert {k: run.get(k, "auto" if k == "format" else None) for k in expected} == expected, argv


@pytest.mark.parametrize(
    "argv",
    [
        ["hook", "claude-stop"],
        ["hook", "claude-stop", "-g", "demo", "-a", "builder"],
        ["--root", "r", "hook", "-a", "builder", "claude-session-start", "--goal-id=demo"],
        ["hook", "x", "--goal-id=", "--agent-id", ""],
    ],
)
def test_hook_fast_parser_takes_the_forms_hosts_write(argv: list[str]) -> None:
    assert parse_hook(argv) is not None and typer_parse(argv) is not None


@pytest.mark.parametrize(
    "argv",
    [
        ["hook"],
        ["hook", "--help"],
        ["hook", "claude-stop", "-h"],
        ["hook", "a", "b"],
        ["hook", "claude-stop", "-g"],
        ["hook", "claude-stop", "-g", "-a", "x"],
        ["hook", "claude-stop", "-g", "a", "-g", "b"],
        ["hook", "claude-stop", "-gdemo"],
        ["hook", "--", "claude-stop"],
        ["hook", "claude-stop", "--format", "json"],
        ["hooks"],
        ["quota", "should-run", "--goal-id=", "x", "-a", "b"],
    ],
)
def test_hook_fast_parser_defers_what_it_does_not_know(argv: list[str]) -> None:
    assert parse_hook(argv) is None and parse_fast(argv) is None


@pytest.mark.parametrize(
    "args",
    [
        ["-g", "demo", "-a", "builder", "--surface", "codex-app"],
        ["--goal-id=demo", "--agent-id", "builder"],
        ["-g", "demo", "-a", "builder", "--surface", "codex-app", "--loopx-command", "/opt/my tools/loopx"],
        ["-g", "demo", "-a", "builder", "--loopx-command=it's", "--surface=codex-app"],
        ["-g", "demo", "-a", "builder", "--surface", "dsh"],
        ["-g", "demo", "-a", "builder", "--surface", "claude-code"],
        ["-g", "demo", "-a", "builder", "--surface", "nope"],
        ["-g", "demo", "-a", "builder", "--surface", ""],
        ["-g", "Bad", "-a", "builder", "--surface", "codex-app"],
        ["-g", "demo", "-a", "", "--surface", "codex-app"],
    ],
)
def test_heartbeat_prompt_lean_entry_matches_typer(root: Path, args: list[str]) -> None:
    """The lean entry and typer's command (LOOPX_NO_FAST_PATH: pluggy's registry too): same bytes and code."""
    assert parse_heartbeat(["heartbeat-prompt", *args]) is not None
    fast = run_loopx("heartbeat-prompt", *args, root=root)
    slow = run_loopx("heartbeat-prompt", *args, root=root, env={"LOOPX_NO_FAST_PATH": "1"})
    assert (fast.exit_code, fast.stdout, fast.stderr) == (slow.exit_code, slow.stdout, slow.stderr)
    assert "Traceback" not in fast.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["heartbeat-prompt"],
        ["heartbeat-prompt", "-g", "demo"],
        ["heartbeat-prompt", "-g", "demo", "-a", "b", "--help"],
        ["heartbeat-prompt", "-g", "demo", "-a", "b", "extra"],
        ["heartbeat-prompt", "-g", "demo", "-a", "b", "--surface"],
        ["heartbeat-prompt", "-g", "demo", "-a", "b", "--surface", "x", "--surface", "y"],
        ["heartbeat-prompt", "-g", "demo", "-a", "b", "--format", "json"],
        ["--root", "-g", "heartbeat-prompt", "-g", "demo", "-a", "b"],
    ],
)
def test_heartbeat_parser_defers_what_it_does_not_know(argv: list[str]) -> None:
    assert parse_heartbeat(argv) is None
