"""The receipt index (`.loopx/goals/<goal>/receipts.json`): where each receipt's line starts."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from loopx_core.schema.common import StrictModel
from loopx_core.schema.domain import Count


class ReceiptIndex(StrictModel):
    """Offsets of receipt lines in the ledger and the run history, and how far each was read."""

    schema_version: Literal[1]
    ledger_offset: Count = 0
    runs_offset: Count = 0
    spends: dict[str, Count] = Field(default_factory=dict)
    """Turn instance id -> offset of its spend line in `events.jsonl`."""
    voids: dict[str, Count] = Field(default_factory=dict)
    """Voided event id -> offset of the void line."""
    runs: dict[str, Count] = Field(default_factory=dict)
    """Run id -> offset of its line in `runs/index.jsonl`."""
