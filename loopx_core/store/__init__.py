"""The state store: atomic files under `.loopx/`, per-goal locks, an append-only ledger."""

from loopx_core.store.base import Store
from loopx_core.store.choice import open_store
from loopx_core.store.files import FileStore, find_root

__all__ = ["FileStore", "Store", "find_root", "open_store"]
