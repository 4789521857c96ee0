"""should-run's hot path: the fast entry matches typer and imports nothing it does not need."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from loopx_core.cli.entry import parse_fast
from tests.conftest import T0_ISO, run_loopx

HEAVY = ("typer", "click", "jinja2", "tomlkit", "mcp", "pluggy", "rich")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for args in (
        ["init"],
        ["goal", "add", "-g", "demo", "-o", "Ship"],
        ["agent", "register", "-a", "builder", "-c", "python"],
        ["todo", "add", "-g", "demo", "--title", "Write parser", "-c", "python"],
    ):
        assert run_loopx(*args, root=tmp_path).exit_code == 0
    return tmp_path


def test_should_run_imports_no_heavy_modules(root: Path) -> None:
    code = (
        "import sys, json\n"
        "from loopx_core.cli.entry import main\n"
        "try:\n"
        f"    main(['--root', {str(root)!r}, 'quota', 'should-run', '-g', 'demo', '-a', 'builder'])\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})), file=sys.stderr)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"LOOPX_NOW": T0_ISO, "PATH": ""},
        check=True,
    )
    assert json.loads(proc.stderr.strip().splitlines()[-1]) == []
    assert json.loads(proc.stdout)["decision"] == "run"


@pytest.mark.parametrize(
    "args",
    [
        ["-g", "demo", "-a", "builder"],
        ["--goal-id", "demo", "--agent-id=builder", "-f", "markdown"],
        ["-g", "demo", "-a", "builder", "-c", "shell", "--available-capability", "ssh"],
        ["-g", "demo", "-a", "builder", "--surface", "codex-app", "--format", "json"],
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
