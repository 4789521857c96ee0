"""Class: a project whose `.loopx` is broken says what is wrong and where, never "no .loopx/".

An empty `.loopx/` in a subfolder, a `.loopx` that is a file, a `registry.json` that is a FIFO,
a folder, a socket, a link to /dev/zero, to nothing or round a loop: from the project folder
and from a folder below it, every command (and `loopx init`, which once answered
`created: false` over a FIFO) answers one line naming `.loopx` or the registry with the exit
code of what is wrong (3: nothing to read there; 4: something that is no LoopX folder or
file), says what to do, and writes nothing.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.errors import ExitCode
from tests.builders import build_project
from tests.conftest import LOOPX_BIN, T0_ISO, CliResult
from tests.non_files import replace_with, tree_of_kinds

COMMANDS = (
    ["status"],
    ["doctor", "--check", "state"],
    ["todo", "list", "-g", "g"],
    ["quota", "should-run", "-g", "g", "-a", "builder"],
    ["quota", "spend", "-g", "g", "-a", "builder", "--manual", "--slots", "1", "--turn-instance-id", "x"],
    ["goal", "add", "-g", "h", "-o", "o"],
    ["init"],
)


def _run(args: list[str], cwd: Path) -> CliResult:
    import subprocess

    env = {**os.environ, "LOOPX_NOW": T0_ISO}
    env.pop("LOOPX_ROOT", None)
    proc = subprocess.run(
        [str(LOOPX_BIN), *args], capture_output=True, text=True, env=env, timeout=30, cwd=cwd,
        stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


def _check(root: Path, cwd: Path, code: ExitCode, words: str, *, unread: tuple[str, ...] = ()) -> None:
    """Every command refuses with `code` and `words`; those in `unread` (never reading it) may answer."""
    for args in COMMANDS:
        before = tree_of_kinds(root) if (root / ".loopx").is_dir() else None
        result = _run(args, cwd)
        where = f"{' '.join(args)} from {cwd.relative_to(root.parent)}"
        if args[0] in unread and result.exit_code == 0:
            continue
        if args[0] == "doctor" and code == ExitCode.STATE_INVALID:  # the doctor reports it, as a finding
            assert result.exit_code == int(ExitCode.DRIFT) and words in result.stdout, f"{where}: {result}"
            continue
        assert result.exit_code == int(code), f"{where}: {result.exit_code} {result.stderr}"
        if args[1:2] == ["should-run"]:  # a packet is its answer: blocked_health, the line in it
            assert '"blocked_health"' in result.stdout and words in result.stdout, f"{where}: {result}"
            continue
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, (
            f"{where}: {result.stderr}"
        )
        assert words in result.stderr, f"{where}: {result.stderr}"
        assert "no .loopx/ in this folder" not in result.stderr, where
        assert str(root) not in result.stderr + result.stdout, where
        if before is not None:
            assert tree_of_kinds(root) == before, f"{where} changed files"


def test_an_empty_state_folder_in_a_subfolder_is_named_not_denied(tmp_path: Path) -> None:
    root = tmp_path / "p"
    build_project(root, agents=("builder",))
    sub = root / "sub"
    (sub / ".loopx").mkdir(parents=True)
    for args in COMMANDS[:-1]:
        result = _run(args, sub)
        assert result.exit_code == int(ExitCode.NOT_FOUND), result.stderr
        assert ".loopx/ holds no registry.json" in result.stderr and "project above" in result.stderr
    deeper = sub / "a" / "b"
    deeper.mkdir(parents=True)
    result = _run(["status"], deeper)
    assert "../../.loopx/ holds no registry.json" in result.stderr, result.stderr
    assert _run(["init"], sub).exit_code == 0  # what the message offers works
    assert (sub / ".loopx/registry.json").is_file()


def test_a_state_dir_that_is_a_file_is_named(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / ".loopx").write_text("not a folder")
    for cwd in (root, root / "below"):
        cwd.mkdir(exist_ok=True)
        _check(root, cwd, ExitCode.STATE_INVALID, "is a file, not LoopX's folder")
    assert (root / ".loopx").read_text() == "not a folder"


def test_a_state_dir_that_is_a_file_hides_no_project_above(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    build_project(outer, agents=("builder",))
    inner = outer / "inner"
    inner.mkdir()
    (inner / ".loopx").write_text("")
    result = _run(["status"], inner)
    assert result.exit_code == int(ExitCode.STATE_INVALID) and "is a file" in result.stderr


@pytest.mark.parametrize("kind", ["fifo", "folder", "socket", "dev-zero", "link-to-nothing", "link-loop"])
def test_a_registry_that_is_not_a_file_is_named_by_every_command_and_init(tmp_path: Path, kind: str) -> None:
    root = tmp_path / "p"
    build_project(root, agents=("builder",))
    replace_with(root / ".loopx/registry.json", kind)
    below = root / "below"
    below.mkdir()
    for cwd in (root, below):
        _check(root, cwd, ExitCode.STATE_INVALID, "registry at .loopx/registry.json is ", unread=("todo",))


def test_init_in_a_project_keeps_answering_created_false(tmp_path: Path) -> None:
    root = tmp_path / "p"
    build_project(root, agents=("builder",))
    result = _run(["init", "--format", "json"], root)
    assert result.exit_code == 0 and '"created":false' in result.stdout.replace(" ", "")
    shutil.rmtree(root / ".loopx")
    assert _run(["status"], root).exit_code == int(ExitCode.NOT_FOUND)


NAMES = st.text(st.characters(codec="ascii", categories=("L", "N")), min_size=1, max_size=6)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(root_at=st.lists(NAMES, min_size=1, max_size=3), cwd_at=st.lists(NAMES, max_size=3))
def test_a_state_dir_that_is_a_file_is_named_without_the_folders_around_it(
    tmp_path_factory: pytest.TempPathFactory, root_at: list[str], cwd_at: list[str]
) -> None:
    """`--root` anywhere, run from anywhere: the root is named from the working folder when it
    is that folder, one above it or one inside it, else by its own name, never by a path
    through the folders around it (`../../tmp/...`)."""
    base = tmp_path_factory.mktemp("where")
    root, cwd = base.joinpath(*root_at), base.joinpath(*cwd_at)
    root.mkdir(parents=True, exist_ok=True)
    cwd.mkdir(parents=True, exist_ok=True)
    if (root / ".loopx").is_dir():  # the cwd's own folder of the same name: not this case
        return
    (root / ".loopx").write_text("not a folder")
    result = _run(["--root", str(root), "status"], cwd)
    assert result.exit_code == int(ExitCode.STATE_INVALID), result.stderr
    named = result.stderr.removeprefix("loopx: error: ").split(" is a file, not LoopX's folder")[0]
    relative = os.path.relpath(root, cwd)
    parts = relative.split(os.sep)
    if ".." not in parts or set(parts) == {".."}:
        assert named == (".loopx" if relative == "." else f"{relative}/.loopx")
    else:
        assert named == f"{root.name}/.loopx"
    assert str(base) not in result.stderr and "../" + base.name not in result.stderr
