"""Fault injection for crash tests: `LOOPX_FAULT=after:<phase>` or `before_receipt:<phase>`.

`after:<phase>` kills the process right after the phase's receipt is journaled;
`before_receipt:<phase>` kills it after the phase's effect but before its receipt is
written. The process dies with `os._exit`, like a SIGKILL: no cleanup, no flush.
"""

from __future__ import annotations

import os

FAULT_EXIT_CODE = 86


def point(moment: str, phase: str) -> None:
    """Die here if `LOOPX_FAULT` names this moment and phase."""
    if os.environ.get("LOOPX_FAULT") == f"{moment}:{phase}":
        os._exit(FAULT_EXIT_CODE)
