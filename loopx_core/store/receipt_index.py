"""`ReceiptIndex`: the pydantic model of `.loopx/goals/<goal>/receipts.json`, the one schema.

store/receipts.py reads and writes the file without pydantic when it is sure (its `Index`,
proven equal to this model on generated files and values); anything else is judged here.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from loopx_core.models.common import StrictModel


class ReceiptIndex(StrictModel):
    """Offsets of receipt lines in the ledger and the run history, and how far each was read."""

    schema_version: Literal[1]
    ledger_offset: int = Field(default=0, ge=0)
    runs_offset: int = Field(default=0, ge=0)
    spends: dict[str, int] = Field(default_factory=dict)
    """Turn instance id -> offset of its spend line in `events.jsonl`."""
    voids: dict[str, int] = Field(default_factory=dict)
    """Voided event id -> offset of the void line."""
    runs: dict[str, int] = Field(default_factory=dict)
    """Run id -> offset of its line in `runs/index.jsonl`."""
