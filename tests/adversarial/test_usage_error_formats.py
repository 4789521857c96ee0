"""Class: a usage error answered in the format the command line asked for, however it is spelled.

Click's own usage errors (an unknown option, a bad choice) happen before the command runs,
so the group reads `--format` from the raw words: `--format X`, `--format=X`, `-f X` and `-fX`
all count, and the last one given wins, as click itself would take it; a mistyped format is
answered with the one meant, whichever spelling carried it. JSON puts the error
object on stdout (and the line on stderr); Markdown and human put only the line on stderr.
Each is exit 2. A command group given no command prints its help on stderr and exits 2.
"""

from __future__ import annotations

import json

import pytest

from loopx_core.errors import ExitCode
from tests.conftest import Cli, Project, run_loopx

SPELLINGS = [
    lambda f: ["--format", f],
    lambda f: [f"--format={f}"],
    lambda f: ["-f", f],
    lambda f: [f"-f{f}"],
]
LINE = "loopx: error: No such option: --bogus (see `loopx status --help`)\n"


@pytest.mark.parametrize("spelling", range(len(SPELLINGS)))
@pytest.mark.parametrize("fmt", ["json", "markdown", "human"])
def test_each_spelling_of_the_format_is_honoured(cli: Cli, spelling: int, fmt: str) -> None:
    result = cli("status", "--bogus", *SPELLINGS[spelling](fmt))
    assert result.exit_code == ExitCode.USAGE
    assert result.stderr == LINE
    if fmt == "json":
        assert json.loads(result.stdout)["error"] == {
            "code": "usage",
            "message": LINE.removeprefix("loopx: error: ").rstrip("\n"),
            "exit_code": 2,
        }
    else:
        assert result.stdout == ""


@pytest.mark.parametrize(("first", "last"), [("json", "markdown"), ("markdown", "json"), ("human", "json")])
def test_the_last_format_given_wins(cli: Cli, first: str, last: str) -> None:
    result = cli("status", *SPELLINGS[1](first), "--bogus", *SPELLINGS[3](last))
    assert result.exit_code == ExitCode.USAGE and result.stderr == LINE
    assert (result.stdout != "") == (last == "json")


@pytest.mark.parametrize("group", ["notify", "goal", "store"])
def test_a_group_without_a_command_prints_its_help(project: Project, group: str) -> None:
    result = run_loopx(group, root=project.root)
    assert result.exit_code == ExitCode.USAGE
    assert result.stderr.startswith(f"Usage: loopx {group} [OPTIONS] COMMAND [ARGS]...\n")
    assert "Commands" in result.stderr and result.stdout == ""
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("spelling", range(len(SPELLINGS)))
@pytest.mark.parametrize(("typed", "meant"), [("jsn", "json"), ("markdwon", "markdown"), ("humna", "human")])
def test_a_mistyped_format_is_answered_with_the_one_meant(
    cli: Cli, spelling: int, typed: str, meant: str
) -> None:
    result = cli("status", *SPELLINGS[spelling](typed))
    assert result.exit_code == ExitCode.USAGE
    assert result.stderr == (
        f"loopx: error: Invalid value for '--format' / '-f': '{typed}' is not one of 'auto', 'human', "
        f"'json', 'markdown'. (did you mean {meant}?) (see `loopx status --help`)\n"
    )
