"""`--format`'s choices for typer: a `StrEnum` of `cli.output.FORMATS`.

Only typer's commands import this module (typer needs an `Enum` for a choice): `enum` costs a
process about 3 ms at start-up, so the commands hosts run every tick pass the same values as
plain strings, which `cli.output` takes as well (a `Format` is a str).
"""

from __future__ import annotations

from enum import StrEnum


class Format(StrEnum):
    """Output formats: `auto` picks `human` on a terminal and `json` in a pipe."""

    auto = "auto"
    human = "human"
    json = "json"
    markdown = "markdown"
