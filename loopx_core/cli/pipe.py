"""A loopx process whose output cannot be written: one line on stderr, a documented code.

Whatever stands behind stdout may refuse a write: a pipe whose reader has gone, a full disk
(`>/dev/full`), a descriptor closed before loopx started (`>&-`). The console script
(cli/entry.py `main`) puts `Output` in place of `sys.stdout` before any command runs: a write
or flush the stream refuses is remembered, never raised into a command (which could not act
on it, and whose error output would fail the same way), and the rest of the output goes
nowhere. At exit, `Output.finish` turns it into the exit code: a command that was failing has
said why on stderr already and keeps its code; one that had an answer says it was lost, and
exits 1 (`ExitCode.INTERNAL`).
"""

from __future__ import annotations

import os
import sys

__all__ = ["READER_GONE", "Output", "guard_stdout"]

READER_GONE = "loopx: error: the output pipe was closed before loopx finished writing\n"
"""The one line a command writes when what reads its output has gone (exit 1)."""
CLOSED = "standard output is closed"


class Output:
    """`sys.stdout` of a loopx process: a write the stream refuses is remembered, never raised.

    Everything else (`isatty`, `fileno`, `encoding`, `buffer`) is the stream's own.
    """

    __slots__ = ("failure", "stream")

    def __init__(self, stream: object) -> None:
        self.stream = stream
        self.failure: BaseException | None = None if stream is not None else OSError(CLOSED)

    def write(self, text: str) -> int:
        """Write `text`, or drop it once the stream has refused a write."""
        if self.failure is None:
            try:
                return self.stream.write(text)  # type: ignore[attr-defined, no-any-return]
            except (OSError, ValueError) as error:  # ValueError: a closed file object
                self._fail(error)
        return len(text)

    def flush(self) -> None:
        """Flush the stream, unless it has refused a write already."""
        if self.failure is None:
            try:
                self.stream.flush()  # type: ignore[attr-defined]
            except (OSError, ValueError) as error:
                self._fail(error)

    def _fail(self, error: BaseException) -> None:
        self.failure = error
        try:  # the stream's buffered rest goes nowhere, so no later flush (the interpreter's) fails again
            devnull = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(devnull, self.stream.fileno())  # type: ignore[attr-defined]
            finally:
                os.close(devnull)
        except (OSError, ValueError, AttributeError):  # no descriptor to point elsewhere
            pass

    def __getattr__(self, name: str) -> object:
        return getattr(self.stream, name)

    def finish(self, code: object) -> object:
        """The exit code once stdout is flushed: `code`, or 1 with one line on stderr when the
        answer could not be written (a failing command keeps its code: it has said why)."""
        self.flush()
        if self.failure is None or (code is not None and code != 0):
            return code
        if isinstance(self.failure, BrokenPipeError):
            line = READER_GONE
        else:
            reason = (
                getattr(self.failure, "strerror", None) or str(self.failure) or type(self.failure).__name__
            )
            line = f"loopx: error: the output could not be written ({reason}): the answer is lost\n"
        try:
            sys.stderr.write(line)
            sys.stderr.flush()
        except (OSError, ValueError, AttributeError):  # stderr has gone too: the exit code is all there is
            pass
        return 1


def guard_stdout() -> Output:
    """Put an `Output` in place of `sys.stdout` (once) and return it."""
    current = sys.stdout
    if isinstance(current, Output):
        return current
    guarded = Output(current)
    sys.stdout = guarded  # type: ignore[assignment]
    return guarded
