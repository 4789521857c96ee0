"""The settlement commands' lean entry (cli/lean_settle.py) against typer's commands.

- every row of the lean table is typer's command: the same options and spellings, kinds,
  required options, and the runner's defaults are typer's, so the two cannot drift;
- whatever the lean parser accepts, typer's own parser reads with the same values, and the
  lines hosts run are accepted (the forms a packet's next actions spell);
- on generated command lines against one project state, the lean entry and typer
  (`LOOPX_NO_FAST_PATH=1`) exit with the same code, print the same stdout and stderr bytes
  and leave the same files;
- each settlement command of a turn imports none of the heavy modules: no pydantic (it reads
  and writes lean objects through store/lean_store.py), no filelock (the lean store's flock),
  no typer, click, rich, jinja2, mcp, pluggy, tomlkit; and none of the pydantic models' modules
  (PYDANTIC_MODELS). The probe is shown not blind on a typer command that loads them;
- none of them loads the standard-library modules it does not use (UNNEEDED): no
  importlib.metadata, no subprocess without a validation command; a begin imports no spend
  module (ONLY_FOR).
"""

from __future__ import annotations

import ast
import inspect
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopx_core import commands
from loopx_core.cli import settle
from loopx_core.cli.formats import Format
from loopx_core.cli.lean_settle import (
    COMMANDS,
    FLAG,
    FLOAT,
    FORMAT,
    INT,
    MANY,
    VALUE,
    Command,
    dispatch,
    parse,
)
from tests.builders import demo_project, tree
from tests.conftest import T0, T0_ISO, run_loopx
from tests.probe import NO_COVERAGE, START_UP

HEAVY = (
    *("pydantic", "pydantic_core", "typer", "click", "jinja2", "rich", "mcp", "tomlkit", "pluggy"),
    *("filelock", "psycopg", "anyio", "httpx", "yaml"),
)
"""Third-party modules a settlement command might load."""
PYDANTIC_MODELS = (
    *(
        f"loopx_core.models.{n}"
        for n in ("common", "domain", "goal", "journal", "ledger", "registry", "runs")
    ),
    "loopx_core.store.receipt_index",
)
"""The pydantic models' modules: a settlement command loads them only when a value is in doubt."""


def _command(path: tuple[str, ...]) -> Any:
    """typer's click command for `loopx PATH`."""
    import typer.main

    from loopx_core.cli.app import app

    command: Any = typer.main.get_command(app)
    for word in path:
        command = command.commands[word]
    return command


def _kind(param: Any) -> str:
    """The lean kind of one of typer's options."""
    annotation = param.type_descriptor.annotation
    if param.is_flag:
        return FLAG
    if param.multiple:
        return MANY
    if annotation is Format:
        return FORMAT
    return {str: VALUE, int: INT, float: FLOAT}[annotation]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c.path))
def test_every_row_is_typers_command(command: Command) -> None:
    """Spellings, kinds and required options as typer declares them; the runner's defaults are typer's."""
    params = {p.name: p for p in _command(command.path).params}
    table: dict[str, tuple[set[str], str]] = {}
    for spelling, (param, kind) in command.options.items():
        table.setdefault(param, (set(), kind))[0].add(spelling)
    assert set(table) == set(params)
    for name, param in params.items():
        assert table[name] == (set(param.opts) | set(param.secondary_opts), _kind(param)), name
        assert not param.envvar and param.nargs == 1 and not param.count and param.callback is None, name
    assert command.required == tuple(n for n, p in params.items() if p.required)
    runner = inspect.signature(getattr(settle, command.runner)).parameters
    assert list(runner)[: 1 + len(command.required)] == ["root", *command.required]
    assert set(runner) - {"root"} == set(params)
    for name, param in params.items():
        if param.required:
            assert runner[name].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD, name
        else:
            assert runner[name].kind is inspect.Parameter.KEYWORD_ONLY, name
            assert runner[name].default == param.default, name


def typer_reads(argv: list[str]) -> tuple[str, str | None, dict[str, Any]] | None:
    """The command path, `--root` and option values typer's own parser gives `loopx ARGV` (None: refused)."""
    import typer.main

    from loopx_core.cli.app import app

    group: Any = typer.main.get_command(app)
    try:
        ctx = group.make_context("loopx", list(argv))
        root = ctx.params["root"]
        command, words = group, ctx._protected_args + ctx.args
        while hasattr(command, "resolve_command"):
            name, command, rest = command.resolve_command(ctx, words)
            ctx = command.make_context(name, rest, parent=ctx)
            words = ctx._protected_args + ctx.args
        return ctx.command_path, root, dict(ctx.params)
    except BaseException:  # a usage error, help or --version: typer answers it, never the lean entry
        return None


SPELLED_WRONG = ["-h", "--help", "--bogus", "--", "-", "-gd", "-g=d", "--root", "--version", "x", ""]
VALUES = [
    *("d", "demo", "", "-x", "--help", "x y", "=", "json", "yaml", "markdown", "passed"),
    *("0", "1", "7", "1.5", "1e3", "-1", " 1", "1_0", "inf", "nan", "\u0661", "2.", ".5"),
]
PATHS = [c.path for c in COMMANDS] + [("turn",), ("turn", "cancel"), ("todo", "completed"), ("spend",)]


@st.composite
def command_lines(draw: st.DrawFn) -> list[str]:
    """`loopx ...` words: a settlement command, its options spelled every way, and traps."""
    path = list(draw(st.sampled_from(PATHS)))
    row = next((c for c in COMMANDS if list(c.path) == path), None)
    spellings = sorted(row.options) if row else ["-g", "--format"]

    def option(spelling: str) -> list[str]:
        kind = row.options[spelling][1] if row and spelling in row.options else VALUE
        if kind == FLAG:
            return draw(st.sampled_from([[spelling], [spelling], [f"{spelling}=x"]]))
        value = draw(st.sampled_from(VALUES))
        forms = [[spelling, value]] + ([[f"{spelling}={value}"]] if spelling.startswith("--") else [])
        return draw(st.sampled_from(forms))

    groups = (
        [option(next(s for s in spellings if row.options[s][0] == p)) for p in row.required] if row else []
    )
    for _ in range(draw(st.integers(0, 4))):
        if draw(st.integers(0, 4)):
            groups.append(option(draw(st.sampled_from(spellings))))
        else:
            groups.append([draw(st.sampled_from(SPELLED_WRONG))])
    prefix = draw(st.sampled_from([[], [], ["--root", "r"], ["--root", "-r"], ["--root"]]))
    return prefix + path + [word for group in draw(st.permutations(groups)) for word in group]


def _plain(value: Any) -> Any:
    """typer's value as the runner receives it: an empty repeat is None, a repeat a list."""
    if isinstance(value, tuple):
        return list(value) or None
    return value


@settings(max_examples=600, deadline=None)
@given(command_lines(), st.sampled_from([None, "", "from-env"]))
def test_what_the_lean_parser_accepts_typer_reads_the_same(argv: list[str], env_root: str | None) -> None:
    with mock.patch.dict(os.environ, clear=False):
        os.environ.pop("LOOPX_ROOT", None)
        os.environ.pop("_LOOPX_COMPLETE", None)
        if env_root is not None:
            os.environ["LOOPX_ROOT"] = env_root
        lean, slow = parse(argv), typer_reads(argv)
    if lean is None:
        return
    assert slow is not None, argv
    path, root, values = slow
    assert path == "loopx " + " ".join(lean.command.path), argv
    assert lean.root == root, argv
    runner = inspect.signature(getattr(settle, lean.command.runner)).parameters
    given_values = {n: lean.values.get(n, runner[n].default) for n in values}
    assert given_values == {n: _plain(v) for n, v in values.items()}, argv


def _closeout_line(goal: str, agent: str, todo: str, key: str) -> str:
    return commands.command(
        "todo", "complete", "--no-follow-up", goal_id=goal, todo_id=todo, agent_id=agent, turn_key=key
    )


KEY = "sha256:" + "ab" * 32
HOST_LINES = [
    commands.begin_turn("demo", "builder", "t1", "i-1"),
    commands.begin_turn("demo", "builder", None, "i-2"),
    commands.writeback("demo", "builder", KEY),
    commands.spend("demo", "builder", KEY),
    commands.complete("demo", "builder", "t1"),
    _closeout_line("demo", "builder", "t1", KEY),
    f"loopx turn writeback -g demo -a builder -k {KEY} -s done -e ok --changed-file a.py --no-follow-up",
    f"loopx turn spend -g demo -a builder -k {KEY} --slots 2 -f json",
    f"loopx turn closeout -g demo -a builder -k {KEY} -t t1 -e ok -e 'all green'",
    "loopx quota spend -g demo -a builder --manual --minutes 1.5 --turn-instance-id x",
    "loopx turn begin -g demo -a builder --todo-id t1 --lease-minutes 45",
]
"""The lines the packets' next actions spell (loopx_core/commands.py) and their other spellings."""


@pytest.mark.parametrize("line", HOST_LINES)
def test_the_lines_hosts_run_take_the_lean_entry(line: str) -> None:
    argv = shlex.split(line)[1:]
    lean = parse(argv)
    assert lean is not None, line
    slow = typer_reads(argv)
    assert slow is not None and slow[0] == "loopx " + " ".join(lean.command.path)


@pytest.mark.parametrize(
    "argv",
    [
        ["turn", "begin", "-g", "demo"],  # a required option missing
        ["turn", "begin", "-g", "demo", "-a", "b", "--replan", "--replan"],
        ["turn", "begin", "-g", "demo", "-a", "b", "--replan=yes"],
        ["turn", "begin", "-g", "demo", "-a", "b", "--lease-minutes", "1e3"],
        ["turn", "begin", "-g", "demo", "-a", "b", "--help"],
        ["writeback", "-g", "demo", "-a", "b", "-k", "k", "-s", "-e"],
        ["quota", "spend", "-g", "demo", "-a", "b", "-k", "k", "--slots", "-1"],
        ["quota", "spend", "-g", "demo", "-a", "b", "-k", "k", "-k", "k"],
        ["todo", "complete", "-g", "demo", "-t", "t1", "stray"],
        ["todo", "complete", "-g", "demo", "-t", "t1", "-f", "yaml"],
        ["todo", "complete", "-gdemo", "-t", "t1"],
        ["--root", "--help", "todo", "complete", "-g", "demo", "-t", "t1"],
        ["todo", "list", "-g", "demo"],
        ["turn", "cancel", "-g", "demo", "-a", "b", "-k", "k"],
    ],
)
def test_the_lean_parser_defers_what_it_is_not_sure_of(argv: list[str]) -> None:
    assert parse(argv) is None


def test_shell_completion_is_typers(monkeypatch: pytest.MonkeyPatch) -> None:
    """With typer's completion variable set the lean entry steps aside (it would answer otherwise)."""
    argv = ["turn", "spend", "-g", "demo", "-a", "builder", "-k", KEY]
    assert parse(argv) is not None
    monkeypatch.setenv("_LOOPX_COMPLETE", "bash_complete")
    assert dispatch(argv) is None


# -- the same answer and the same files, lean or typer ------------------------------------------


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A project mid-turn: builder's turn on t1 begun, helper's on t2 written back, t3 free, u1 a user todo."""
    from loopx_core.ops import goals, todos
    from loopx_core.settlement.steps import TurnContext
    from loopx_core.settlement.turns import begin_turn, writeback_turn
    from loopx_core.store.files import FileStore

    root = tmp_path_factory.mktemp("settle") / "template"
    root.mkdir()
    store = FileStore(root)
    store.init()
    goals.add_goal(store, "demo", "Ship", T0)
    for agent in ("builder", "helper", "third"):
        goals.register_agent(store, agent, [], T0)
    for title in ("one", "two", "three"):
        todos.add_todo(store, "demo", title, T0)
    todos.add_todo(store, "demo", "owner's", T0, todo_id="u1", kind="user")
    k1 = begin_turn(store, "demo", "builder", T0, todo_id="t1")[0].turn_key
    k2 = begin_turn(store, "demo", "helper", T0, todo_id="t2")[0].turn_key
    writeback_turn(
        TurnContext(store, "demo", "helper", k2, lambda: T0, summary="did two", validation_passed=True),
        adapter="cli",
    )
    return root, {"K1": k1, "K2": k2}


POOLS: dict[str, list[str]] = {
    "goal_id": ["demo", "demo", "nope", "Bad"],
    "agent_id": ["builder", "helper", "third", "nobody"],
    "todo_id": ["t1", "t2", "t3", "u1", "t9"],
    "turn_key": ["K1", "K2", "K2", "sha256:bad"],
    "summary": ["did it", ""],
    "evidence": ["ok", "", "x  y"],
    "validation_status": ["passed", "failed", "maybe"],
    "validation_command": ["true", "exit 3"],
    "changed_file": ["a.py"],
    "no_progress": ["stuck"],
    "slots": ["1", "2", "0", "1.5"],
    "minutes": ["5", "0.5"],
    "lease_minutes": ["30", "0", "1.5", "99999"],
    "turn_instance_id": ["i1", ""],
    "fmt": ["json", "markdown", "human", "auto", "yaml"],
}


@st.composite
def settlement_lines(draw: st.DrawFn) -> list[str]:
    """A settlement command with mostly sensible values for the template, spelled every way."""
    row = draw(st.sampled_from(COMMANDS))
    by_param: dict[str, list[str]] = {}
    for spelling, (param, _) in row.options.items():
        by_param.setdefault(param, []).append(spelling)
    groups: list[list[str]] = []
    for param, spellings in by_param.items():
        if param in row.required:
            if draw(st.integers(0, 9)) == 0:
                continue  # a required option left out, now and then
        elif draw(st.integers(0, 2)):
            continue  # each optional one in a third of the lines
        spelling = draw(st.sampled_from(spellings))
        if row.options[spelling][1] == FLAG:
            groups.append([spelling])
            continue
        for _ in range(draw(st.integers(1, 2)) if row.options[spelling][1] == MANY else 1):
            value = draw(st.sampled_from(POOLS[param]))
            groups.append(
                draw(
                    st.sampled_from(
                        [[spelling, value]] + ([[f"{spelling}={value}"]] if spelling.startswith("--") else [])
                    )
                )
            )
    if draw(st.integers(0, 5)) == 0:
        groups.append([draw(st.sampled_from(["--help", "--bogus", "x"]))])
    return list(row.path) + [w for g in draw(st.permutations(groups)) for w in g]


def _run(
    template: Path, keys: dict[str, str], work: Path, argv: list[str], env: dict[str, str]
) -> tuple[Any, ...]:
    """Run `loopx ARGV` (keys filled in) on a fresh copy of the template at `work`: output and files."""
    shutil.copytree(template, work)
    try:
        words = [keys.get(w, w) for w in argv]
        result = run_loopx(*words, root=work, env=env)
        return result.exit_code, result.stdout, result.stderr, tree(work)
    finally:
        shutil.rmtree(work)


@settings(max_examples=30, deadline=None)
@given(argv=settlement_lines())
def test_lean_and_typer_answer_alike(template: tuple[Path, dict[str, str]], argv: list[str]) -> None:
    """Exit code, stdout, stderr and the files left: the same whichever entry answers."""
    root, keys = template
    work = root.parent / "work"  # one path for both runs, so any path they print is the same
    env = {"LOOPX_ROOT": ""}
    lean = _run(root, keys, work, argv, env)
    slow = _run(root, keys, work, argv, {**env, "LOOPX_NO_FAST_PATH": "1"})
    assert lean[:3] == slow[:3], argv
    assert lean[3] == slow[3], argv


TERMINAL_LINES = [
    ["turn", "begin", "-g", "demo", "-a", "third", "-t", "t3"],
    ["writeback", "-g", "demo", "-a", "builder", "-k", "K1", "-s", "done", "--validation-status", "passed"],
    ["turn", "spend", "-g", "demo", "-a", "helper", "-k", "K2"],
    ["todo", "complete", "-g", "demo", "-t", "u1", "-e", "signed"],
    ["quota", "spend", "-g", "demo", "-a", "nobody", "-k", "K2"],
]
"""On a terminal `auto` is the human form (rich's), and an error is one line without JSON."""


@pytest.mark.parametrize("argv", TERMINAL_LINES, ids=lambda a: " ".join(a[:2]))
def test_a_terminal_gets_the_same_from_both_entries(
    template: tuple[Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch, argv: list[str]
) -> None:
    from tests.terminal import on_terminal

    root, keys = template
    work = root.parent / "terminal"
    words = [keys.get(w, w) for w in argv]
    shown = []
    for fast in (True, False):
        if not fast:
            monkeypatch.setenv("LOOPX_NO_FAST_PATH", "1")
        shutil.copytree(root, work)
        try:
            shown.append((*on_terminal(*words, root=work), tree(work)))
        finally:
            shutil.rmtree(work)
    assert shown[0] == shown[1]
    assert not shown[0][1].lstrip().startswith("{")


# -- what each command imports ------------------------------------------------------------------

FLOW: list[tuple[str, list[str]]] = [
    ("turn begin", ["turn", "begin", "-g", "demo", "-a", "builder", "-t", "t1", "--turn-instance-id", "i1"]),
    (
        "writeback",
        [
            "writeback",
            "-g",
            "demo",
            "-a",
            "builder",
            "-k",
            "{K}",
            "-s",
            "done",
            "--validation-status",
            "passed",
            "-e",
            "ok",
        ],
    ),
    ("quota spend --turn-key", ["quota", "spend", "-g", "demo", "-a", "builder", "-k", "{K}"]),
    ("todo complete", ["todo", "complete", "-g", "demo", "-t", "t1", "-a", "builder", "-e", "ok"]),
    ("turn begin (closing)", ["turn", "begin", "-g", "demo", "-a", "builder", "-t", "t2"]),
    (
        "turn writeback --no-follow-up",
        [
            "turn",
            "writeback",
            "-g",
            "demo",
            "-a",
            "builder",
            "-k",
            "{K}",
            "-s",
            "done",
            "--validation-status",
            "passed",
            "--no-follow-up",
        ],
    ),
    ("turn spend", ["turn", "spend", "-g", "demo", "-a", "builder", "-k", "{K}"]),
    (
        "todo complete --no-follow-up",
        [
            "todo",
            "complete",
            "--no-follow-up",
            "-g",
            "demo",
            "-t",
            "t2",
            "-a",
            "builder",
            "-k",
            "{K}",
            "-e",
            "ok",
        ],
    ),
    ("turn begin (other goal)", ["turn", "begin", "-g", "more", "-a", "builder", "-t", "t1"]),
    (
        "writeback --no-follow-up",
        [
            "writeback",
            "-g",
            "more",
            "-a",
            "builder",
            "-k",
            "{K}",
            "-s",
            "done",
            "--validation-status",
            "passed",
            "--no-follow-up",
        ],
    ),
    ("quota spend (closing)", ["quota", "spend", "-g", "more", "-a", "builder", "-k", "{K}"]),
    (
        "turn closeout",
        ["turn", "closeout", "-g", "more", "-a", "builder", "-k", "{K}", "-t", "t1", "-e", "ok"],
    ),
    ("quota spend --manual", ["quota", "spend", "-g", "spare", "-a", "builder", "--manual", "--slots", "1"]),
    ("turn begin --replan", ["turn", "begin", "-g", "empty", "-a", "builder", "--replan"]),
]
"""Two whole turns (one closing its goal), a manual charge and a replan turn, in order."""
UNNEEDED = {
    "importlib.metadata": "pydantic's plugin loader is LoopX's stand-in when no plugin is declared (models/plugin_loader.py)",
    "email": "came with importlib.metadata",
    "zipfile": "came with importlib.metadata",
    "csv": "came with importlib.metadata",
    "subprocess": "settlement/steps.py imports it only to run a --validation-command",
    **{
        name: "start-up cost (tests/probe.py START_UP): loopx_core.jsontext, frozen_re, datetimes stand in"
        for name in START_UP
    },
}
"""Standard-library modules no settlement command of FLOW needs (none runs a validation command)."""
ONLY_FOR = {
    "loopx_core.ops.spend": "a spend: steps.py imports it in the quota spend step",
    "loopx_core.models.lean_dump": "a write: the lean store encodes a record with it",
}
"""LoopX modules that a turn's begin (or a spend, for the writer) may need, and why."""
BEGINS = [name for name, argv in FLOW if argv[:2] == ["turn", "begin"]]
loaded: dict[str, set[str]] = {}
"""The UNNEEDED and ONLY_FOR modules each step of FLOW left loaded (filled by the `flow` fixture)."""
_PROBE = (  # nothing of its own imported before the command (no json): what is loaded, it loaded
    "import sys\n"
    "from loopx_core.cli.entry import main\n"
    "code = 0\n"
    "try:\n"
    "    main(sys.argv[1:])\n"
    "except SystemExit as done:\n"
    "    code = done.code\n"
    "print(repr([code, sorted({m.split('.')[0] for m in sys.modules} & set(sys.argv[0].split(','))),"
    " sorted(set(sys.modules) & set(WATCHED))]), file=sys.stderr)\n"
)


@pytest.fixture(scope="module")
def flow(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, set[str], str]]:
    """Each step of FLOW run once, in order, by the lean entry: its exit code, heavy modules, stdout."""
    from loopx_core.ops import goals, todos
    from loopx_core.store.files import FileStore

    root = tmp_path_factory.mktemp("flow")
    store = FileStore(root)
    store.init()
    goals.register_agent(store, "builder", [], T0)
    for goal, count in (("demo", 2), ("more", 1), ("spare", 1), ("empty", 0)):
        goals.add_goal(store, goal, "Ship", T0)
        for n in range(count):
            todos.add_todo(store, goal, f"todo {n + 1}", T0)
    seen: dict[str, tuple[int, set[str], str]] = {}
    loaded.clear()
    key = ""
    for name, argv in FLOW:
        words = ["--root", str(root), *(w.replace("{K}", key) for w in argv)]
        proc = subprocess.run(
            [
                sys.executable,
                "-c",
                _PROBE.replace("sys.argv[0]", repr(",".join(HEAVY))).replace(
                    "WATCHED", repr(sorted({*UNNEEDED, *ONLY_FOR, *PYDANTIC_MODELS}))
                ),
                *words,
            ],
            capture_output=True,
            text=True,
            env={**NO_COVERAGE, "LOOPX_NOW": T0_ISO, "PATH": "", "HOME": str(root)},
            stdin=subprocess.DEVNULL,
            check=False,
        )
        code, heavy, unneeded = ast.literal_eval(proc.stderr.strip().splitlines()[-1])
        seen[name] = (code, set(heavy), proc.stdout)
        loaded[name] = set(unneeded)
        if argv[:2] == ["turn", "begin"] and code == 0:
            key = json.loads(proc.stdout)["turn_key"]
    return seen


@pytest.mark.parametrize("step", [name for name, _ in FLOW])
def test_settlement_command_imports_no_heavy_module(
    flow: dict[str, tuple[int, set[str], str]], step: str
) -> None:
    code, heavy, stdout = flow[step]
    assert code == 0, (step, stdout)
    assert heavy == set(), step
    assert not loaded[step] & set(PYDANTIC_MODELS), step


def test_the_probe_sees_heavy_modules(tmp_path: Path) -> None:
    """Not blind: the same probe on a typer command (`todo list`) finds typer and pydantic."""
    from loopx_core.ops import goals
    from loopx_core.store.files import FileStore

    FileStore(tmp_path).init()
    goals.add_goal(FileStore(tmp_path), "demo", "Ship", T0)
    code = _PROBE.replace("sys.argv[0]", repr(",".join(HEAVY))).replace("WATCHED", repr(PYDANTIC_MODELS))
    proc = subprocess.run(
        [sys.executable, "-c", code, "--root", str(tmp_path), "todo", "list", "-g", "demo", "-f", "json"],
        capture_output=True,
        text=True,
        env={**NO_COVERAGE, "LOOPX_NOW": T0_ISO, "PATH": "", "HOME": str(tmp_path)},
        stdin=subprocess.DEVNULL,
        check=False,
    )
    exit_code, heavy, models = ast.literal_eval(proc.stderr.strip().splitlines()[-1])
    assert exit_code == 0 and {"typer", "pydantic"} <= set(heavy) and "loopx_core.models.goal" in models


@pytest.mark.parametrize("step", [name for name, _ in FLOW])
def test_settlement_command_loads_none_of_the_modules_it_does_not_use(
    flow: dict[str, tuple[int, set[str], str]], step: str
) -> None:
    assert flow[step][0] == 0
    # the steps that close their goal queue its notice without subprocess
    found = loaded[step] & set(UNNEEDED)
    assert not found, {name: UNNEEDED[name] for name in found}


@pytest.mark.parametrize("step", BEGINS)
def test_a_begin_imports_no_spend_module(flow: dict[str, tuple[int, set[str], str]], step: str) -> None:
    assert flow[step][0] == 0
    assert "loopx_core.ops.spend" not in loaded[step], ONLY_FOR["loopx_core.ops.spend"]


def test_the_watched_modules_are_seen_where_they_are_used(flow: dict[str, tuple[int, set[str], str]]) -> None:
    """The probe is not blind: a writeback loads the lean writer, a spend the spend module."""
    assert "loopx_core.models.lean_dump" in loaded["writeback"]
    assert {"loopx_core.ops.spend", "loopx_core.models.lean_dump"} <= loaded["quota spend --turn-key"]


def test_the_closing_turn_closed_the_goal(flow: dict[str, tuple[int, set[str], str]]) -> None:
    """The flow did what a host's turn does: both closeouts committed."""
    for step in ("todo complete --no-follow-up", "turn closeout"):
        packet = json.loads(flow[step][2])
        assert packet["status"] == "committed" and "terminal_closeout" in packet["completed_phases"], step


_GC_CODE = """\
import atexit, gc, sys
atexit.register(lambda path=sys.argv[1]: open(path, "w").write(str(gc.isenabled())))
words = sys.argv[3:]
from loopx_core.cli.entry import main
if sys.argv[2] == "process":
    sys.argv = ["loopx", *words]
    main()
main(words)
"""


@pytest.mark.parametrize(
    ("argv", "how", "enabled"),
    [
        (["turn", "begin", "-g", "demo", "-a", "builder", "-t", "t1"], "process", "False"),
        (["turn", "begin", "-g", "demo", "-a", "builder", "-t", "t1"], "embedded", "True"),
        (["todo", "list", "-g", "demo"], "process", "True"),
    ],
    ids=["settlement command as the process", "settlement command called with argv", "typer's command"],
)
def test_only_a_settlement_command_run_as_the_process_stops_the_collector(
    tmp_path: Path, argv: list[str], how: str, enabled: str
) -> None:
    """cli/lean_settle.py `dispatch(process=True)`: the console script's own settlement command
    runs without the cyclic collector; a caller passing argv, and typer's commands, keep it."""
    root = demo_project(tmp_path / "project")
    marker = tmp_path / "gc"
    proc = subprocess.run(
        [sys.executable, "-c", _GC_CODE, str(marker), how, "--root", str(root), *argv],
        env={**os.environ, "LOOPX_NOW": T0_ISO},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert marker.read_text() == enabled


_TEARDOWN_CODE = """\
import sys
class Finalized:
    def __del__(self, path=sys.argv[1], open=open):
        open(path, "w").write("torn down")
finalized = Finalized()
sys.argv = ["loopx", *sys.argv[2:]]
from loopx_core.cli.entry import main
main()
"""


@pytest.mark.parametrize(
    ("argv", "torn_down"),
    [
        (["turn", "begin", "-g", "demo", "-a", "builder", "-t", "t1"], False),
        (["turn", "begin", "-g", "demo", "-a", "nobody", "-t", "t1"], False),
        (["todo", "list", "-g", "demo"], True),
    ],
    ids=["settlement command", "settlement command refused", "typer's command"],
)
def test_a_settlement_command_as_the_process_leaves_without_teardown(
    tmp_path: Path, argv: list[str], torn_down: bool
) -> None:
    """As the tick commands (cli/entry.py `_leave`): with no exit handler registered, the process
    ends once its output is flushed (no module teardown, so no finalizer runs), its answer and
    exit code intact; typer's commands exit the usual way."""
    root = demo_project(tmp_path / "project")
    marker = tmp_path / "teardown"
    proc = subprocess.run(
        [sys.executable, "-c", _TEARDOWN_CODE, str(marker), "--root", str(root), *argv, "-f", "json"],
        env={
            "LOOPX_COVERAGE": "off",
            "LOOPX_NOW": T0_ISO,
            "PATH": "",
            "HOME": str(tmp_path),
        },  # a bare environment, as tests/probe.py: coverage would register an exit handler
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    answer = json.loads(proc.stdout or proc.stderr)
    assert ("error" in answer) == (proc.returncode != 0), proc.stderr
    assert marker.exists() == torn_down
