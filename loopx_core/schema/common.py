"""Shared model base: strict (unknown keys refused); ids and times from the input domain."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from loopx_core.models.constants import SCHEMA_VERSION
from loopx_core.schema.domain import Id, Time

__all__ = ["SCHEMA_VERSION", "Id", "StrictModel", "Time"]


class StrictModel(BaseModel):
    """A model that refuses unknown keys, so a rewrite can never drop data it did not read."""

    model_config = ConfigDict(extra="forbid")
