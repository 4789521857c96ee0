"""The CLI's command tree, walked from the typer app, and the real project the generated CLI
tests start from (tests/adversarial/test_generated_cli.py, test_one_validation_per_kind.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import typer
from typer.testing import CliRunner

from loopx_core.cli.app import app
from loopx_core.store.files import FileStore
from tests.conftest import T0_ISO

SKIPPED = {
    "mcp serve": "serves MCP on stdio until the client hangs up (tested through the SDK in test_mcp*)",
    "turn run-once": "runs --host-command and --validation-command, shell commands doing a host's work",
    "workflow-skills": "installs host facades into the host's config folders (tests/test_installer.py)",
    "dashboard": "serves HTTP",
}
"""Commands that need a host, a shell command or the network: never driven here."""


# -- the command tree ---------------------------------------------------------------------


@dataclass(frozen=True)
class Param:
    """One declared parameter of a command."""

    name: str
    """`--goal-id`, or the argument's name."""
    kind: str
    """`flag`, `str`, `float`, `int`, `format`, `path` or `argument`."""
    required: bool
    multiple: bool


@dataclass(frozen=True)
class Command:
    """A leaf command: its path under `loopx` and its parameters."""

    path: tuple[str, ...]
    params: tuple[Param, ...]

    @property
    def name(self) -> str:
        """`goal add`."""
        return " ".join(self.path)

    @property
    def has_format(self) -> bool:
        """True when it takes `--format`."""
        return any(p.name == "--format" for p in self.params)


def _kind(param: Any) -> str:
    if param.param_type_name == "argument":
        return "argument"
    if getattr(param, "is_flag", False):
        return "flag"
    descriptor = getattr(param, "type_descriptor", None)
    annotation = getattr(descriptor, "annotation", None)
    if annotation is None:  # typer bundling the real click: read click's own type
        annotation = {"float": float, "integer": int}.get(getattr(param.type, "name", ""), str)
    if isinstance(annotation, type) and issubclass(annotation, float):
        return "float"
    if isinstance(annotation, type) and issubclass(annotation, int) and not issubclass(annotation, bool):
        return "int"
    if param.name == "fmt":
        return "format"
    if isinstance(annotation, type) and issubclass(annotation, Path):
        return "path"
    return "str"


def commands() -> list[Command]:
    """Every leaf command of the app, depth first (help order)."""
    found: list[Command] = []

    def walk(command: Any, path: tuple[str, ...]) -> None:
        if hasattr(command, "list_commands"):
            ctx = command.context_class(command)
            for name in command.list_commands(ctx):
                walk(command.get_command(ctx, name), (*path, name))
            return
        params = tuple(
            Param(
                name=p.opts[0] if p.param_type_name == "option" else p.name,
                kind=_kind(p),
                required=bool(p.required),
                multiple=bool(getattr(p, "multiple", False)),
            )
            for p in command.params
            if p.name not in ("help",)
        )
        found.append(Command(path, params))

    walk(typer.main.get_command(app), ())
    return found


ALL_COMMANDS = commands()
DRIVEN = [c for c in ALL_COMMANDS if not any(c.name.startswith(s) for s in SKIPPED)]


# -- the project: a real one, built once, copied per case ---------------------------------


@dataclass
class Template:
    """A real initialised project and the ids and keys it holds."""

    root: Path
    turn_keys: list[str] = field(default_factory=list)
    selections: list[tuple[tuple[str, str], ...]] = field(default_factory=list)
    """Coherent (option, value) choices: a goal, an agent that may act on it, its todo and turn."""


def _invoke(root: Path, *args: str, now: str = T0_ISO) -> Any:
    result = CliRunner().invoke(
        app, ["--root", str(root), *args], env={"LOOPX_NOW": now}, catch_exceptions=False
    )
    return result


def build_template(root: Path) -> Template:
    """init, two goals, two agents, todos, an open turn past writeback and spend, another open
    turn, a gate, a focus wait, a scheduler ack and a manual spend."""
    root.mkdir(parents=True)
    FileStore(root).init()
    template = Template(root)
    steps = [
        ["goal", "add", "-g", "demo", "-o", "Ship the parser"],
        ["goal", "add", "-g", "other", "-o", "Docs", "--compute", "0.5", "--min-interval-minutes", "30"],
        ["agent", "register", "-a", "builder", "-c", "python"],
        ["agent", "register", "-a", "reviewer"],
        ["agent", "register", "-a", "helper"],
        ["agent", "register", "-a", "free", "-c", "python"],
        ["todo", "add", "-g", "demo", "--title", "Write parser", "-c", "python"],
        ["todo", "add", "-g", "demo", "--title", "Approve", "--kind", "user", "--blocks-agent", "reviewer"],
        ["todo", "add", "-g", "demo", "--title", "Docs", "-p", "5"],
        ["todo", "add", "-g", "demo", "--title", "Spare", "-p", "1"],
        ["todo", "add", "-g", "other", "--title", "Read"],
        ["gate", "open", "-g", "other", "--title", "Decide", "--blocks-agent", "builder"],
        [
            "focus",
            "wait",
            "-g",
            "other",
            "--reason",
            "ci",
            "--for-minutes",
            "60",
            "--poll-every-minutes",
            "15",
        ],
        ["quota", "scheduler-ack", "-g", "demo", "-a", "builder", "--rrule", "FREQ=MINUTELY;INTERVAL=5"],
        ["quota", "spend", "-g", "other", "-a", "reviewer", "--manual", "--slots", "2"],
    ]
    for args in steps:
        result = _invoke(root, *args)
        assert result.exit_code == 0, (args, result.stderr)
    begun = _invoke(root, "turn", "begin", "-g", "demo", "-a", "builder", "-t", "t1", "-f", "json")
    assert begun.exit_code == 0, begun.stderr
    key = json.loads(begun.stdout)["turn_key"]
    template.turn_keys.append(key)
    for args in (
        [
            "writeback",
            "-g",
            "demo",
            "-a",
            "builder",
            "-k",
            key,
            "-s",
            "Parser written",
            "--validation-status",
            "passed",
            "-e",
            "pytest green",
        ],
        ["quota", "spend", "-g", "demo", "-a", "builder", "-k", key],
    ):
        result = _invoke(root, *args, now="2026-11-29T12:05:00Z")
        assert result.exit_code == 0, (args, result.stderr)
    other = _invoke(root, "turn", "begin", "-g", "demo", "-a", "helper", "-t", "t3", "-f", "json")
    assert other.exit_code == 0, other.stderr
    template.turn_keys.append(json.loads(other.stdout)["turn_key"])
    builder, helper = template.turn_keys
    for goal, agent, todo, key in [
        ("demo", "builder", "t1", builder),
        ("demo", "helper", "t3", helper),
        ("demo", "free", "t4", None),
        ("demo", "reviewer", "t2", None),
        ("other", "free", "t1", None),
        ("other", "reviewer", "t1", None),
    ]:
        chosen = {"--goal-id": goal, "--agent-id": agent, "--todo-id": todo, "--turn-key": key}
        template.selections.append(tuple((k, v) for k, v in chosen.items() if v is not None))
    return template


def state_files(root: Path) -> list[str]:
    """State paths under `.loopx/` (locks are not state)."""
    base = root / ".loopx"
    return sorted(
        str(p.relative_to(base))
        for p in base.rglob("*")
        if p.is_file() and "locks" not in p.relative_to(base).parts
    )


def snapshot(root: Path) -> dict[str, bytes | str]:
    """Every entry under `.loopx/` (files by bytes, folders by name), locks excluded."""
    base = root / ".loopx"
    if not base.is_dir():
        return {}
    found: dict[str, bytes | str] = {}
    for path in sorted(base.rglob("*")):
        relative = path.relative_to(base)
        if "locks" in relative.parts:
            continue
        found[str(relative)] = "<dir>" if path.is_dir() else path.read_bytes()
    return found
