"""A command whose output has no reader any more (a closed pipe): one line, a documented code.

Shared by the hot commands (cli/entry.py) and the lean settlement commands (cli/lean_settle.py).
"""

from __future__ import annotations

import os
import sys

__all__ = ["READER_GONE", "reader_gone"]

READER_GONE = "loopx: error: the output pipe was closed before loopx finished writing\n"
"""The one line a command writes when what reads its output has gone (exit 1)."""


def reader_gone(code: int = 0) -> int:
    """A command's output has no reader any more (a closed pipe): the rest of it goes nowhere
    (so no later flush fails again). A command that was failing with `code` has said why on
    stderr already and keeps its code; one that had an answer says it was lost, and exits 1
    (`ExitCode.INTERNAL`)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, sys.stdout.fileno())
        finally:
            os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no descriptor to point elsewhere: nothing left to lose
        pass
    if code:
        return code
    try:
        sys.stderr.write(READER_GONE)
        sys.stderr.flush()
    except (OSError, ValueError):  # stderr has gone too: the exit code is all there is
        pass
    return 1
