"""Class: a stdout (or stderr) that fails as a file object, not as a descriptor.

cli/pipe.py's `Output` stands in for `sys.stdout`. tests/adversarial/test_unwritable_output.py
drives real descriptors (a closed pipe, /dev/full, `>&-`); an embedding program may instead
hand loopx a Python file object with no descriptor at all. Then too: a refused write or flush
is remembered, never raised, later writes are dropped, and `finish` makes it one line on
stderr and exit 1 (a failing command keeps its code); when stderr has gone as well, the exit
code is all that is left, and still no exception. Guarding stdout twice keeps one guard.
"""

from __future__ import annotations

import io
import sys

import pytest

from loopx_core.cli.pipe import Output, guard_stdout


class Refusing(io.StringIO):
    """A text stream without a descriptor whose writes (or flushes) fail with `error`."""

    def __init__(self, error: BaseException, *, on_flush: bool = False) -> None:
        super().__init__()
        self.error = error
        self.on_flush = on_flush

    def write(self, text: str) -> int:
        if not self.on_flush:
            raise self.error
        return super().write(text)

    def flush(self) -> None:
        if self.on_flush:
            raise self.error


def closed() -> io.StringIO:
    """A stream closed before anything was written."""
    stream = io.StringIO()
    stream.close()
    return stream


@pytest.mark.parametrize(
    ("stream", "reason"),
    [
        (closed(), "I/O operation on closed file"),
        (Refusing(OSError(28, "No space left on device")), "No space left on device"),
        (Refusing(OSError(5, "Input/output error"), on_flush=True), "Input/output error"),
        (Refusing(ValueError("")), "ValueError"),
    ],
)
def test_a_refusing_file_object_is_one_line_and_exit_1(
    stream: io.StringIO, reason: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out = Output(stream)
    assert out.write("the answer\n") == len("the answer\n")
    out.flush()
    assert out.failure is not None
    assert out.write("more") == 4  # dropped, not raised
    assert out.finish(0) == 1
    assert (
        capsys.readouterr().err
        == f"loopx: error: the output could not be written ({reason}): the answer is lost\n"
    )


def test_a_failing_command_keeps_its_code_and_adds_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    out = Output(closed())
    out.write("partial")
    assert out.finish(4) == 4
    assert capsys.readouterr().err == ""


def test_with_stderr_gone_too_the_exit_code_is_all_there_is(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stderr", closed())
    out = Output(closed())
    out.write("the answer")
    assert out.finish(None) == 1


def test_guarding_twice_keeps_one_guard(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    first = guard_stdout()
    assert guard_stdout() is first and sys.stdout is first
    first.write("kept")
    assert first.stream.getvalue() == "kept" and first.finish(0) == 0  # type: ignore[attr-defined]
