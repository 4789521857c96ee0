"""Shared model base: strict (unknown keys refused), ids checked, times UTC."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, StringConstraints

from loopx_core.ids import ID_PATTERN

SCHEMA_VERSION = 1
"""The one schema version this release reads and writes."""

Id = Annotated[str, StringConstraints(pattern=ID_PATTERN)]
"""A goal, agent, todo, gate or event id (see `loopx_core.ids`)."""


class StrictModel(BaseModel):
    """A model that refuses unknown keys, so a rewrite can never drop data it did not read."""

    model_config = ConfigDict(extra="forbid")
