"""Class: one validation per kind of value, the same in every command that takes it.

Observed: `turn begin --todo-id ../x` answered "not found" (exit 3) where every other command
says the id is invalid (exit 2); capabilities were case-sensitive and unchecked, so a todo
needing `Python` stranded on the owner when the agent had `python`. Here every option of
every command that names an id (walked from the app's command tree, so a new command joins)
is given ids no record could have, beside otherwise valid values: exit 2 (1 for a hook, which
hosts read 2 as "block"), "invalid <kind> id" in one line, nothing written. Capabilities are ids in any case: stored and matched in
lower case by every command that takes one, anything else refused the same way.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from loopx_core.cli.app import app
from loopx_core.errors import UsageError
from loopx_core.ids import check_capabilities, is_valid_id
from tests.cli_tree import DRIVEN, Template, build_template, snapshot
from tests.conftest import T0_ISO

ID_KINDS = {
    "--goal-id": "goal",
    "--agent-id": "agent",
    "--todo-id": "todo",
    "--gate-id": "gate",
    "--event-id": "event",
    "--bound-agent": "agent",
    "--exclude-agent": "agent",
    "--blocks-agent": "agent",
}
"""Every option that names a record by its id, and the kind its error names."""
HOSTILE_IDS = ["../x", "/etc", "x" * 65, "Ünï", "T1", "a b", "t1\n", "", ".hidden", "a..b"]
ARGUMENTS = {"hook": "claude-stop", "notify add": "file://notices.jsonl"}
"""A valid positional argument where `x` is not one."""
EXTRA = {"quota spend": ["--manual", "--slots", "1"], "quota scheduler-ack": ["--rrule", "FREQ=HOURLY"]}
"""What a command needs beside its required options to reach its ids."""
CLEARS = {("todo update", o) for o in ("--bound-agent", "--exclude-agent", "--blocks-agent")} | {
    ("hook", "--goal-id"),
    ("hook", "--agent-id"),
}
"""Options where an empty word is documented: it clears the field (a hook: it is not given, and
LOOPX_GOAL_ID / LOOPX_AGENT_ID or the installed default answer)."""
CASES = [
    (command, option)
    for command in DRIVEN
    for option in (p.name for p in command.params)
    if option in ID_KINDS and command.name not in ("init",)
]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Template:
    """The real project of tests/adversarial/test_generated_cli.py (copied per case)."""
    return build_template(tmp_path_factory.mktemp("one-validation") / "project")


def _fill(command: object, template: Template, option: str, bad: str) -> list[str]:
    """The command's words: valid values for what it requires, `bad` in `option`."""
    chosen = dict(template.selections[0])
    argv = [*command.path]  # type: ignore[attr-defined]
    for param in command.params:  # type: ignore[attr-defined]
        if param.name == option:
            argv += [option, bad]
        elif param.kind == "argument" and param.required:
            argv.append(ARGUMENTS.get(command.name, "x"))  # type: ignore[attr-defined]
        elif param.required and param.name in chosen:
            argv += [param.name, chosen[param.name]]
        elif param.required and param.name == "--turn-key":
            argv += [param.name, template.turn_keys[0]]
        elif param.required and param.kind in ("str", "path"):
            argv += [param.name, "x"]
        elif param.required and param.kind in ("int", "float"):
            argv += [param.name, "1"]
    return argv + EXTRA.get(command.name, [])  # type: ignore[attr-defined]


def test_every_id_option_is_found() -> None:
    """The walk reaches the commands the issue named (a walk that found nothing would pass)."""
    names = {(c.name, o) for c, o in CASES}
    assert ("turn begin", "--todo-id") in names and ("todo claim", "--todo-id") in names
    assert len(CASES) >= 60, len(CASES)


@pytest.mark.parametrize(("command", "option"), CASES, ids=[f"{c.name} {o}" for c, o in CASES])
def test_an_impossible_id_is_invalid_everywhere(
    template: Template, tmp_path: Path, command: object, option: str
) -> None:
    root = tmp_path / "project"
    shutil.copytree(template.root, root)
    before = snapshot(root)
    for bad in HOSTILE_IDS:
        if bad == "" and (command.name, option) in CLEARS:  # type: ignore[attr-defined]
            continue
        argv = _fill(command, template, option, bad)
        result = CliRunner().invoke(app, ["--root", str(root), *argv], env={"LOOPX_NOW": T0_ISO})
        assert result.exit_code == (1 if command.name == "hook" else 2), (
            argv,
            result.exit_code,
            result.stderr,
        )  # type: ignore[attr-defined]
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, result.stderr
        assert re.search(rf"invalid ([a-z]+ )?{ID_KINDS[option]} id", lines[0]), (argv, lines[0])
        assert snapshot(root) == before, argv


@given(st.lists(st.text(max_size=12), max_size=5))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_capabilities_are_ids_in_any_case(values: list[str]) -> None:
    words = [v.strip().lower() for v in values if v.strip()]
    if all(is_valid_id(w) for w in words):
        assert check_capabilities(values) == sorted(set(words))
    else:
        with pytest.raises(UsageError, match="invalid capability"):
            check_capabilities(values)


CAPABILITY_COMMANDS = [
    ["agent", "register", "-a", "newbie", "-c"],
    ["todo", "add", "-g", "demo", "--title", "x", "-c"],
    ["todo", "update", "-g", "demo", "-t", "t3", "-c"],
    ["quota", "should-run", "-g", "demo", "-a", "free", "-c"],
]


@pytest.mark.parametrize("argv", CAPABILITY_COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_every_capability_option_refuses_the_same_words(
    template: Template, tmp_path: Path, argv: list[str]
) -> None:
    root = tmp_path / "project"
    shutil.copytree(template.root, root)
    before = snapshot(root)
    for bad in ["../x", "has space", "Ünï", "x" * 65]:
        result = CliRunner().invoke(app, ["--root", str(root), *argv, bad], env={"LOOPX_NOW": T0_ISO})
        assert result.exit_code == 2 and "invalid capability" in result.stderr, (bad, result.stderr)
        assert snapshot(root) == before


def test_a_capability_matches_in_any_case(template: Template, tmp_path: Path) -> None:
    """A todo needing `Python` goes to the agent registered with `PYTHON`; `-c PyThOn` offers it."""
    root = tmp_path / "project"
    shutil.copytree(template.root, root)

    def loopx(*argv: str) -> str:
        result = CliRunner().invoke(
            app, ["--root", str(root), *argv, "-f", "json"], env={"LOOPX_NOW": T0_ISO}
        )
        assert result.exit_code == 0, (argv, result.stderr)
        return result.stdout

    loopx("goal", "add", "-g", "caps", "-o", "Case")
    loopx("agent", "register", "-a", "shouty", "-c", "PYTHON")
    loopx("todo", "add", "-g", "caps", "--title", "Parse", "-c", "Python")
    assert '"decision":"run"' in loopx("quota", "should-run", "-g", "caps", "-a", "shouty").replace(" ", "")
    offered = loopx("quota", "should-run", "-g", "caps", "-a", "shouty", "-c", "PyThOn")
    assert '"decision":"run"' in offered.replace(" ", "")
