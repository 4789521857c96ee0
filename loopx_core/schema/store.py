"""`.loopx/store.json`'s model, apart from `store.choice` so choosing the file store needs no pydantic."""

from __future__ import annotations

from typing import Literal

from loopx_core.schema.common import StrictModel


class StoreConfig(StrictModel):
    """`.loopx/store.json`: the store this project's state lives in."""

    schema_version: Literal[1]
    store: str
