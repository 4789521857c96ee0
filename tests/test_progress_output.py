"""Progress where people wait: `turn run-once` streams the host command's output, the installer
and the doctor show their steps; nothing of it on stdout, nothing extra in a pipe or as JSON.

A terminal is a real pseudo-terminal (`os.openpty`); streaming is proven by reading the
subprocess's stderr incrementally while the host command is still waiting for the test.
"""

from __future__ import annotations

import io
import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.cli.output import Status
from loopx_core.ops import goals, todos
from loopx_core.settlement.driver import HOST_OUTPUT_TAIL, DriverOptions, run_once
from loopx_core.store.files import FileStore
from tests.conftest import LOOPX_BIN, T0, T0_ISO, Project, run_loopx

WAIT_FOR_GO = "i=0; while [ ! -e go ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done"
"""Shell: wait (at most 30 s) until the test creates the file `go`."""
SLOW_HOST = f"echo started-work >&2; {WAIT_FOR_GO}; echo finished-work"
"""A host command that prints to stderr, then waits for the test, then prints to stdout."""


def setup(root: Path, todo_count: int = 1) -> None:
    """A project with goal g, agent builder and `todo_count` todos."""
    root.mkdir(parents=True, exist_ok=True)
    store = FileStore(root)
    store.init()
    goals.add_goal(store, "g", "Objective", T0)
    goals.register_agent(store, "builder", [], T0)
    for n in range(todo_count):
        todos.add_todo(store, "g", f"Todo {n + 1}", T0)


def turn_args(host: str, *extra: str) -> list[str]:
    """`turn run-once` for builder on goal g: HOST, validated by `true`, then EXTRA."""
    return [
        "turn",
        "run-once",
        "-g",
        "g",
        "-a",
        "builder",
        "--host-command",
        host,
        "--validation-command",
        "true",
        *extra,
    ]


def output_tail(root: Path, turn_key: str | None = None) -> str:
    """The host output a turn journal of goal g captured (its only one, or `turn_key`'s)."""
    if turn_key is None:
        (journal,) = (root / ".loopx/goals/g/turns").glob("*.json")
    else:
        journal = root / ".loopx/goals/g/turns" / f"{turn_key.removeprefix('sha256:')}.json"
    return json.loads(journal.read_text())["host_result"]["output_tail"]


class Reader:
    """Reads one file descriptor of a running `loopx` incrementally, with a deadline."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.seen = b""

    def until(self, wanted: bytes, timeout: float = 30) -> bool:
        """Read until `wanted` was seen (True) or the output ended or time ran out (False)."""
        deadline = time.monotonic() + timeout
        while wanted not in self.seen:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.fd], [], [], max(left, 0))
            if not ready:
                return False
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:  # a pty's follower side closed: the child is done
                return False
            if not chunk:
                return False
            self.seen += chunk
        return True

    def rest(self) -> str:
        """Everything until the end of output, as text (a pty's CRLF as LF)."""
        self.until(b"\0never\0")
        return self.seen.decode(errors="replace").replace("\r\n", "\n")


def spawn(args: list[str], root: Path, *, terminal: bool) -> tuple[subprocess.Popen[bytes], Reader, int]:
    """Start `loopx --root ROOT ARGS`: stderr (and stdout) on a pseudo-terminal, or stderr a pipe
    and stdout a pipe; returns the process, a reader of stderr and the stdout descriptor."""
    env = {**os.environ, "LOOPX_NOW": T0_ISO, "COLUMNS": "120", "TERM": "xterm"}
    command = [str(LOOPX_BIN), "--root", str(root), *args]
    if terminal:
        leader, follower = os.openpty()
        proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=follower, stderr=follower, env=env)
        os.close(follower)
        return proc, Reader(leader), leader
    proc = subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    assert proc.stdout is not None and proc.stderr is not None
    return proc, Reader(proc.stderr.fileno()), proc.stdout.fileno()


def on_terminal(args: list[str], root: Path) -> tuple[int, str]:
    """Run to the end on a pseudo-terminal: (exit code, everything shown)."""
    proc, reader, leader = spawn(args, root, terminal=True)
    shown = reader.rest()
    os.close(leader)
    return proc.wait(timeout=60), shown


# -- turn run-once: the host command's output, as it runs --------------------------------------


def test_host_output_streams_to_stderr_before_the_command_ends(tmp_path: Path) -> None:
    setup(tmp_path)
    proc, stderr, stdout_fd = spawn(turn_args(SLOW_HOST, "--stream"), tmp_path, terminal=False)
    try:
        assert stderr.until(b"started-work\n"), stderr.seen
        assert proc.poll() is None  # the host command waits for `go`: its line came while it ran
        (tmp_path / "go").touch()
        assert stderr.until(b"finished-work\n"), stderr.seen  # its stdout comes to stderr too
        out = b""
        while chunk := os.read(stdout_fd, 65536):
            out += chunk
    finally:
        (tmp_path / "go").touch()
        code = proc.wait(timeout=60)
    assert code == 0, stderr.seen
    assert stderr.seen == b"started-work\nfinished-work\n"  # in a pipe: the output alone, no status
    packet = json.loads(out)  # stdout is the turn result, untouched by the host's output
    assert packet["status"] == "committed" and "host_execute" in packet["completed_phases"]
    assert output_tail(tmp_path) == "started-work\nfinished-work\n"


def test_a_terminal_streams_by_default_under_the_elapsed_time(tmp_path: Path) -> None:
    setup(tmp_path)
    proc, shown, leader = spawn(turn_args(SLOW_HOST), tmp_path, terminal=True)
    try:
        assert shown.until(b"started-work"), shown.seen
        assert shown.until(b"s elapsed"), shown.seen  # the live line, redrawn every second
        assert proc.poll() is None
        (tmp_path / "go").touch()
        text = shown.rest()
    finally:
        (tmp_path / "go").touch()
        os.close(leader)
        code = proc.wait(timeout=60)
    assert code == 0, text
    assert text.index("started-work") < text.index("finished-work") < text.index("turn run-once: took ")
    assert "# Turn committed" in text  # the result for people, after the progress
    assert output_tail(tmp_path) == "started-work\nfinished-work\n"


def test_no_stream_on_a_terminal_shows_the_elapsed_time_only(tmp_path: Path) -> None:
    setup(tmp_path)
    host = "echo quiet-work >&2; sleep 1.5"
    code, text = on_terminal(turn_args(host, "--no-stream"), tmp_path)
    assert code == 0, text
    assert "quiet-work" not in text and "turn run-once: took " in text and "s elapsed" in text
    assert output_tail(tmp_path) == "quiet-work\n"  # captured all the same


def test_streamed_or_not_the_turn_settles_the_same(tmp_path: Path) -> None:
    host = "echo to-stderr >&2; echo to-stdout; printf 'no newline at the end'"
    results = {}
    for how in ("--stream", "--no-stream", None):
        root = tmp_path / str(how)
        setup(root)
        done = run_loopx(*turn_args(host, *([how] if how else [])), root=root)
        assert done.exit_code == 0, done.stderr
        shown = "to-stderr\nto-stdout\nno newline at the end"
        assert done.stderr == (shown if how == "--stream" else "")  # a pipe: off unless asked
        packet = done.json()
        assert isinstance(packet, dict)
        results[how] = ({k: v for k, v in packet.items() if k != "receipts"}, output_tail(root))
    assert results["--stream"] == results["--no-stream"] == results[None]


def test_a_background_child_holding_the_output_does_not_hold_the_turn(tmp_path: Path) -> None:
    setup(tmp_path)
    started = time.monotonic()
    done = run_loopx(*turn_args("sleep 30 & echo spawned", "--stream"), root=tmp_path)
    assert done.exit_code == 0, done.stderr
    assert time.monotonic() - started < 20  # not the 30 s the child sleeps
    assert done.stderr == "spawned\n" and output_tail(tmp_path) == "spawned\n"


def test_a_failing_host_command_is_streamed_and_refused_as_before(tmp_path: Path) -> None:
    setup(tmp_path)
    done = run_loopx(*turn_args("echo 'it broke' >&2; exit 3", "--stream"), root=tmp_path)
    assert done.exit_code == 14, done.stderr  # writeback_rejected, as without streaming
    error = "loopx: error: writeback_rejected: host command exited 3"
    assert done.stderr.splitlines() == ["it broke", error]  # the host's line, then the one error


# -- the driver, as a library: silent by default, a tee when given a sink ------------------------


def drive(project: Project, sink: Callable[[bytes], None] | None, host: str) -> dict[str, object]:
    """One turn for builder through the driver in-process (a todo added for it)."""
    store = project.store
    todos.add_todo(store, "g", "Another", T0)
    options = DriverOptions(host, "true", host_output=sink)
    return run_once(store, "g", "builder", options, lambda: T0)


@pytest.fixture
def goal(project: Project) -> Project:
    """The `project` fixture with goal g and agent builder."""
    goals.add_goal(project.store, "g", "Objective", T0)
    goals.register_agent(project.store, "builder", [], T0)
    return project


def test_the_driver_prints_nothing_unless_given_a_sink(
    goal: Project, capfd: pytest.CaptureFixture[str]
) -> None:
    packet = drive(goal, None, "echo hidden; echo hidden-err >&2")
    assert packet["status"] == "committed"
    assert capfd.readouterr() == ("", "")  # neither the host's stdout nor its stderr leaked
    assert output_tail(goal.root, str(packet["turn_key"])) == "hidden\nhidden-err\n"


def test_a_failing_sink_is_dropped_and_the_turn_settles(goal: Project) -> None:
    calls: list[bytes] = []

    def broken(chunk: bytes) -> None:
        calls.append(chunk)
        raise BrokenPipeError(32, "Broken pipe")

    packet = drive(goal, broken, "echo one; sleep 0.3; echo two")
    assert packet["status"] == "committed" and calls == [b"one\n"]  # dropped after its failure
    assert output_tail(goal.root, str(packet["turn_key"])) == "one\ntwo\n"


@given(data=st.binary(max_size=3 * HOST_OUTPUT_TAIL))
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_the_sink_gets_every_byte_and_the_tail_is_what_was_captured_before(
    goal: Project, data: bytes
) -> None:
    """Any output (binary, invalid UTF-8, no newline): the sink gets it byte for byte, and the
    journal's tail is the one the driver kept before the tee (the whole output decoded, its end)."""
    (goal.root / "out.bin").write_bytes(data)
    got: list[bytes] = []
    packet = drive(goal, got.append, "cat out.bin")
    assert packet["status"] == "committed"
    assert b"".join(got) == data
    tail = output_tail(goal.root, str(packet["turn_key"]))
    assert tail == data.decode(errors="replace")[-HOST_OUTPUT_TAIL:]


@given(text=st.text(max_size=200), cuts=st.lists(st.integers(0, 800), max_size=6))
def test_status_shows_streamed_text_whole_wherever_the_chunks_split_it(text: str, cuts: list[int]) -> None:
    """A multi-byte character split across chunks is shown whole; off a terminal, the text alone."""
    data = text.encode()
    points = sorted({min(c, len(data)) for c in cuts})
    chunks = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    shown = io.StringIO()
    real, sys.stderr = sys.stderr, shown
    try:
        status = Status("label", live=False)
        for chunk in chunks:
            status.write(chunk)
        status.close()
        status.close()  # closing twice shows nothing more
    finally:
        sys.stderr = real
    assert shown.getvalue() == text


# -- the installer and the doctor: their steps on a terminal ------------------------------------


def test_the_installer_shows_its_steps_on_a_terminal_and_nothing_in_a_pipe(tmp_path: Path) -> None:
    setup(tmp_path)
    install = ["workflow-skills", "--install", "--surface", "claude-code"]
    code, text = on_terminal(install, tmp_path)
    assert code == 0, text
    lines = text.splitlines()
    rendering = lines.index("rendering claude-code (project scope, default layout)\u2026")
    assert lines[rendering + 1].startswith("writing ") and lines[rendering + 1].endswith(" file(s)\u2026")
    assert text.index("writing ") < text.index("Install claude-code")  # the steps come first
    code, text = on_terminal([*install, "-f", "json"], tmp_path)  # JSON asked: no steps
    assert code == 0 and "\u2026" not in text and json.loads(text)["operation"] == "install"
    again = run_loopx(*install, root=tmp_path)
    assert again.exit_code == 0 and again.stderr == ""  # a pipe: nothing extra
    code, text = on_terminal(["workflow-skills", "--uninstall", "--surface", "claude-code"], tmp_path)
    assert code == 0, text
    assert "planning the removal of claude-code (project scope)\u2026" in text.splitlines()


@pytest.mark.slow
def test_the_doctor_shows_its_steps_on_a_terminal_and_reports_the_same(tmp_path: Path) -> None:
    setup(tmp_path)
    installed = run_loopx("workflow-skills", "--install", "--surface", "claude-code", root=tmp_path)
    assert installed.exit_code == 0, installed.stderr
    code, text = on_terminal(["doctor", "-f", "markdown"], tmp_path)
    steps = [line for line in text.splitlines() if line.endswith("\u2026")]
    assert steps == [
        "checking state (goals, ledger, journals)\u2026",
        "checking installation (host facades, the MCP server)\u2026",
        "checking installation: claude-code (project scope)\u2026",
        "checking liveness (agents' heartbeats)\u2026",
        "checking notices (the outbox)\u2026",
    ], text
    piped = run_loopx("doctor", "-f", "markdown", root=tmp_path)
    assert piped.stderr == "" and piped.exit_code == code
    assert text.split(steps[-1] + "\n", 1)[1] == piped.stdout  # group by group: the same report
    code, text = on_terminal(["doctor", "--repair", "--dry-run", "-f", "markdown"], tmp_path)
    assert next(line for line in text.splitlines() if line.endswith("\u2026")) == (
        "checking state, installation, liveness, notices, then planning repairs\u2026"
    )
