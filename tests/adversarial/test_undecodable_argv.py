"""Argument words that are not UTF-8: refused before any command runs, one usage line, nothing written.

The class: any word of the command line (or `LOOPX_ROOT`) made of bytes that are not UTF-8,
which Python decodes to lone surrogates that no file, packet or JSON can hold. Every command
(the tick's argparse words and typer's commands alike) is refused at cli/entry.py's `main`: exit 2 (1 for a
hook, which hosts read 2 as "block"), one line naming the word's position (and its option),
the word shown with its bad bytes escaped (`\\xff`), no traceback, no absolute path, and the
project left byte for byte as it was. Generated: random bytes at a random place of a random
word of real commands, run through the real console script.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.builders import demo_project
from tests.conftest import LOOPX_BIN, T0_ISO

WHO = ["-g", "demo", "-a", "builder"]
COMMANDS = [
    ["todo", "add", "-g", "demo", "--title", "A title"],
    ["gate", "open", "-g", "demo", "--title", "Review"],
    ["turn", "begin", *WHO, "-t", "t1", "-f", "json"],
    ["writeback", *WHO, "-k", "key", "-s", "done"],
    ["quota", "spend", *WHO, "-k", "key"],
    ["todo", "complete", *WHO, "-t", "t1", "-e", "ok"],
    ["quota", "should-run", *WHO],
    ["hook", "claude-stop", *WHO],
    ["heartbeat-prompt", *WHO, "--surface", "codex-app"],
    ["status", "-g", "demo"],
    ["goal", "add", "-g", "other", "-o", "Ship it"],
]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A demo project (goal `demo`, agent `builder`, todo `t1`)."""
    return demo_project(tmp_path / "project")


def tree(root: Path) -> dict[str, bytes]:
    """Every file under `root` and its bytes."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def run(argv: list[bytes], env: dict[str, str | bytes] | None = None) -> subprocess.CompletedProcess[bytes]:
    """The real console script with `argv` as raw bytes."""
    full = {**os.environ, "LOOPX_NOW": T0_ISO, **(env or {})}
    return subprocess.run(
        [os.fsencode(LOOPX_BIN), *argv],
        capture_output=True,
        env=full,  # type: ignore[arg-type]
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def check_refused(proc: subprocess.CompletedProcess[bytes], root: Path, *, hook: bool, where: str) -> None:
    """One usage line on stderr naming `where`, with the bad byte escaped; the documented exit code."""
    err = proc.stderr.decode()  # the line itself is UTF-8 (bad bytes escaped)
    assert proc.returncode == (1 if hook else 2), err
    assert err.count("\n") == 1 and err.endswith("\n"), err
    prefix = "loopx: hook: " if hook else "loopx: error: "
    assert err.startswith(f"{prefix}{where}"), err
    assert "is not UTF-8 text" in err and "\\xff" in err, err
    assert "Traceback" not in err and str(root) not in err and os.fsdecode(root) not in err
    out = proc.stdout.decode()
    assert str(root) not in out


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    command=st.sampled_from(COMMANDS),
    data=st.data(),
    extra=st.binary(max_size=6).map(lambda b: b.replace(b"\0", b"")),  # argv cannot hold a NUL
    typer_only=st.booleans(),
)
def test_a_word_that_is_not_utf8_is_refused_anywhere(
    root: Path, command: list[str], data: st.DataObject, extra: bytes, typer_only: bool
) -> None:
    before = tree(root)
    words = [w.encode() for w in command]
    position = data.draw(st.integers(0, len(words) - 1), label="position")
    word = words[position]
    cut = data.draw(st.integers(0, len(word)), label="cut")
    words[position] = word[:cut] + extra + b"\xff" + word[cut:]  # \xff is never UTF-8
    proc = run(
        [b"--root", os.fsencode(root), *words], env={"LOOPX_NO_FAST_PATH": "1"} if typer_only else None
    )
    option = ""
    if position and command[position - 1].startswith("-") and not words[position].startswith(b"-"):
        option = command[position - 1]
    if words[position].startswith(b"--") and b"=" in words[position]:
        option = words[position].partition(b"=")[0].decode(errors="replace")
    hook = command[0] == "hook" and position > 0
    check_refused(proc, root, hook=hook, where=f"argument {position + 3} ")  # after --root ROOT, 1-based
    if option.isascii() and option.isprintable():
        shown = f"(the value of {option}) " if option else "is not"
        assert f"argument {position + 3} {shown}" in proc.stderr.decode()
    assert tree(root) == before


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c[:2]) for c in COMMANDS])
def test_a_root_that_is_not_utf8_is_refused(root: Path, command: list[str]) -> None:
    before = tree(root)
    bad_root = os.fsencode(root) + b"\xff"
    hook = command[0] == "hook"
    proc = run([b"--root", bad_root, *(w.encode() for w in command)])
    check_refused(proc, root, hook=hook, where="argument 2 (the value of --root) is not UTF-8 text: a path")
    env_proc = run([w.encode() for w in command], env={"LOOPX_ROOT": bad_root})
    check_refused(env_proc, root, hook=hook, where="LOOPX_ROOT is not UTF-8 text: a path")
    assert tree(root) == before


def test_the_reported_issue_todo_add_and_gate_open(root: Path) -> None:
    """H4's finding: these exited 1 with a PydanticSerializationError."""
    for command in (["todo", "add", "-g", "demo", "--title"], ["gate", "open", "-g", "demo", "--title"]):
        proc = run([b"--root", os.fsencode(root), *(w.encode() for w in command), b"bad\xff"])
        assert proc.stderr.decode() == (
            "loopx: error: argument 8 (the value of --title) is not UTF-8 text: 'bad\\xff'\n"
        )
        assert proc.returncode == 2


def test_utf8_words_are_not_refused(root: Path) -> None:
    """Text that is UTF-8 but not ASCII passes: the check refuses only what no file can hold."""
    proc = run([b"--root", os.fsencode(root), *(w.encode() for w in COMMANDS[0][:-1]), "Café ✓".encode()])
    assert proc.returncode == 0, proc.stderr
