"""The stores: atomic files under `.loopx/` (per-goal locks, an append-only ledger), or PostgreSQL."""

from __future__ import annotations

from loopx_core.store.base import Store
from loopx_core.store.choice import open_store
from loopx_core.store.files import FileStore
from loopx_core.store.roots import find_root

__all__ = ["FileStore", "Store", "find_root", "open_store"]
