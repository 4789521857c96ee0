"""Output conventions, as `gh` has them: people on a terminal, JSON in a pipe, one error, completion.

A terminal is a real pseudo-terminal (`os.openpty`) given to a `loopx` subprocess as its
stdout (and stderr), so `isatty()` is what a user's shell would make it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.cli.common import suggestion
from loopx_core.cli.formats import Format
from loopx_core.cli.output import Table, as_markdown
from tests.conftest import LOOPX_BIN, T0_ISO, Cli, run_loopx
from tests.terminal import on_terminal


@pytest.fixture
def filled(cli: Cli) -> Cli:
    assert cli("goal", "add", "-g", "parser", "-o", "Ship it", "-f", "json").exit_code == 0
    assert cli("agent", "register", "-a", "builder", "-c", "python", "-f", "json").exit_code == 0
    title = "Write the\ntokenizer | fast"  # a newline and a pipe: neither may break a table
    assert cli("todo", "add", "-g", "parser", "--title", title, "-f", "json").exit_code == 0
    return cli


@pytest.mark.parametrize(
    "args",
    [["goal", "list"], ["todo", "list", "-g", "parser"], ["agent", "list"], ["status"], ["hosts", "list"]],
)
def test_a_terminal_gets_an_aligned_table_and_a_pipe_gets_json(filled: Cli, args: list[str]) -> None:
    code, shown = on_terminal(*args, root=filled.root)
    assert code == 0, shown
    assert not shown.lstrip().startswith("{") and "|" not in shown.replace("tokenizer | fast", "")
    assert "─" in shown  # rich's rule under the header row
    piped = run_loopx(*args, root=filled.root)
    assert piped.exit_code == 0 and isinstance(piped.json(), dict)


def test_a_title_with_a_newline_stays_on_its_row(filled: Cli) -> None:
    _, shown = on_terminal("todo", "list", "-g", "parser", root=filled.root)
    (row,) = [line for line in shown.splitlines() if line.startswith("t1")]
    assert "Write the tokenizer | fast" in row
    markdown = filled("todo", "list", "-g", "parser", "-f", "markdown").stdout
    assert "| Write the tokenizer \\| fast |" in markdown


def test_format_still_chooses(filled: Cli) -> None:
    assert filled("goal", "list", "-f", "markdown").stdout.startswith("| goal | status |")
    assert filled("goal", "list", "-f", "json").json()["goals"][0]["goal_id"] == "parser"
    human = filled("goal", "list", "-f", "human").stdout
    assert human.splitlines()[0].split() == ["goal", "status", "compute", "objective"]
    assert all(line == line.rstrip() for line in human.splitlines())  # no trailing spaces


def test_an_error_on_a_terminal_is_one_line_on_stderr_and_no_json(filled: Cli) -> None:
    code, shown = on_terminal("goal", "show", "-g", "nope", root=filled.root)
    assert code == 3
    assert shown.strip().splitlines() == ["loopx: error: goal 'nope' not found (see `loopx goal list`)"]


def test_an_error_in_a_pipe_is_one_line_on_stderr_and_the_json_object(filled: Cli) -> None:
    result = run_loopx("goal", "show", "-g", "nope", root=filled.root)
    assert result.exit_code == 3 and len(result.stderr.splitlines()) == 1
    assert result.json() == {
        "error": {"code": "not_found", "message": result.stderr[14:].strip(), "exit_code": 3}
    }


def test_json_asked_on_a_terminal_is_json(filled: Cli) -> None:
    code, shown = on_terminal("goal", "show", "-g", "nope", "-f", "json", root=filled.root)
    lines = shown.strip().splitlines()
    assert code == 3 and len(lines) == 2
    assert json.loads(next(line for line in lines if line.startswith("{")))["error"]["exit_code"] == 3


def test_the_packets_hosts_read_are_json_in_a_pipe_whatever_the_command_path(filled: Cli) -> None:
    fast = run_loopx("quota", "should-run", "-g", "parser", "-a", "builder", root=filled.root)
    slow = run_loopx(
        "quota",
        "should-run",
        "-g",
        "parser",
        "-a",
        "builder",
        root=filled.root,
        env={"LOOPX_NO_FAST_PATH": "1"},
    )
    assert fast.exit_code == slow.exit_code == 0
    assert fast.stdout == slow.stdout and fast.json()["decision"] == "run"


@pytest.mark.parametrize(
    "args",
    [
        ["-g", "parser", "-a", "builder"],
        ["-g", "parser", "-a", "builder", "-f", "auto"],
        ["-g", "parser", "-a", "builder", "--format=human"],
        ["-g", "parser", "-a", "nobody"],
    ],
)
def test_should_run_on_a_terminal_is_the_same_on_the_fast_path_and_typers(
    filled: Cli, args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from loopx_core.cli import fast as entry

    assert entry.parse(["quota", "should-run", *args]) is not None  # the fast path takes it
    fast = on_terminal("quota", "should-run", *args, root=filled.root)
    monkeypatch.setenv("LOOPX_NO_FAST_PATH", "1")
    assert fast == on_terminal("quota", "should-run", *args, root=filled.root)
    code, shown = fast
    assert "{" not in shown  # the packet's Markdown (or one error line), never JSON
    assert (code, shown.startswith("loopx: error: agent 'nobody'")) == (
        (3, True) if "nobody" in args else (0, False)
    )


def test_hot_commands_never_import_rich(filled: Cli) -> None:
    probe = (
        "import sys\nfrom loopx_core.cli import entry\n"
        "try:\n    entry.main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'rich', 'typer'}), file=sys.stderr)\n"
    )
    for args, banned in (
        (["quota", "should-run", "-g", "parser", "-a", "builder"], {"rich", "typer"}),
        (["goal", "list", "-f", "json"], {"rich"}),  # typer, but never rich, without human output
    ):
        proc = subprocess.run(
            [sys.executable, "-c", probe, "--root", str(filled.root), *args],
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, "LOOPX_NOW": T0_ISO},
        )
        loaded = set(json.loads(proc.stderr.strip().splitlines()[-1].replace("'", '"')))
        assert not loaded & banned, args


def test_completion_script_is_generated_and_completes(filled: Cli) -> None:
    # the shell named, not detected: typer detects the parent's (sh under make, which it refuses)
    env = {**os.environ, "SHELL": "/bin/bash", "_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}
    script = subprocess.run(
        [str(LOOPX_BIN), "--show-completion", "bash"], capture_output=True, text=True, check=False, env=env
    )
    assert script.returncode == 0 and "complete -o default -F _loopx_completion loopx" in script.stdout
    completed = subprocess.run(
        [str(LOOPX_BIN)],
        capture_output=True,
        text=True,
        check=False,
        env={
            **env,
            "_LOOPX_COMPLETE": "complete_bash",
            "COMP_WORDS": "loopx status --format ",
            "COMP_CWORD": "3",
        },
    )
    assert completed.stdout.split() == [f.value for f in Format]


@pytest.mark.parametrize(
    ("args", "hint"),
    [
        (["agent", "register", "-a", "b", "--surface", "claud-code"], "did you mean claude-code?"),
        (["workflow-skills", "--install", "--surface", "codexapp"], "did you mean codex-app?"),
        (["workflow-skills", "--check", "--surface", "dsh", "--scope", "usr"], "did you mean user?"),
        (["status", "--format", "jsn"], "did you mean json?"),
        (["todo", "add", "-g", "parser", "--title", "x", "--kind", "agnet"], "did you mean agent?"),
        (["todo", "list", "-g", "parser", "--status", "opne"], "did you mean open?"),
        (["statsu"], "Did you mean 'status'"),
    ],
)
def test_a_mistyped_choice_gets_a_suggestion(filled: Cli, args: list[str], hint: str) -> None:
    result = filled(*args)
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert hint in line and line.startswith("loopx: error: ")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=st.text(min_size=1, max_size=30).filter(lambda v: v not in ("project", "user")))
def test_any_bad_scope_is_one_usage_line(filled: Cli, value: str) -> None:
    result = filled("workflow-skills", "--check", "--surface", "dsh", "--scope", value, "-f", "json")
    assert result.exit_code == 2
    assert len(result.stderr.splitlines()) == 1 and result.json()["error"]["code"] == "usage"
    assert ("did you mean" in result.stderr) == bool(suggestion(value, ["project", "user"]))


@given(
    rows=st.lists(
        st.lists(st.one_of(st.none(), st.text(max_size=20), st.integers()), min_size=3, max_size=3),
        max_size=5,
    )
)
def test_any_cell_stays_in_its_markdown_row(rows: list[list[object]]) -> None:
    text = as_markdown(Table(["a", "b", "c"], rows))
    lines = text.splitlines()
    assert len(lines) == 2 + len(rows)
    for line in lines:
        assert line.replace("\\|", "").count("|") == 4
