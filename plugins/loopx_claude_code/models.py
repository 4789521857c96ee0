"""The Claude Code host's own file: the Stop hook's counter (its schema; the hooks read it lean).

`loopx_claude_code.lean` is generated from this model by scripts/gen_lean_readers.py; the
hooks read through it and ask this model only when the lean reader is unsure.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class StopCounter(BaseModel):
    """`.loopx/hooks/claude-stop-<session digest>.json`: how often the Stop hook blocked in a row."""

    model_config = ConfigDict(extra="forbid", strict=True)
    blocks: int = Field(ge=0, le=1_000_000)
