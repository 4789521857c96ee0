"""Fault injection for crash and race tests (no effect unless the variables are set).

`LOOPX_FAULT=after:<phase>` kills the process right after the phase's receipt is journaled;
`before_receipt:<phase>` kills it after the phase's effect but before its receipt is
written. The process dies with `os._exit`, like a SIGKILL: no cleanup, no flush.

`LOOPX_RACE_WINDOW=<seconds>` holds every read-modify-write of the store open that long
between its read and its write, so two writers that are not serialised by the lock both
read the same state, deterministically: a lock removed from around any read-modify-write
fails the race tests every time instead of now and then.
"""

from __future__ import annotations

import os
import time

FAULT_EXIT_CODE = 86


def point(moment: str, phase: str) -> None:
    """Die here if `LOOPX_FAULT` names this moment and phase."""
    if os.environ.get("LOOPX_FAULT") == f"{moment}:{phase}":
        os._exit(FAULT_EXIT_CODE)


def race_window() -> None:
    """Pause between a read and its write when `LOOPX_RACE_WINDOW` asks for it (tests only)."""
    raw = os.environ.get("LOOPX_RACE_WINDOW")
    if raw:
        try:
            seconds = min(max(float(raw), 0.0), 5.0)
        except ValueError:
            return
        time.sleep(seconds)
