"""`--format`'s choices for typer: a `StrEnum` of `cli.declare.FORMATS`."""

from __future__ import annotations

from enum import StrEnum

from loopx_core.cli.declare import FORMATS

Format = StrEnum("Format", [(name, name) for name in FORMATS])  # type: ignore[misc]
"""Output formats: `auto` picks `human` on a terminal and `json` in a pipe."""
