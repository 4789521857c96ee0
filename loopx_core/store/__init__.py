"""The state store: atomic files under `.loopx/`, per-goal locks, an append-only ledger.

The names load on first use (PEP 562), so `loopx_core.store.lean` imports without pydantic.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from typing import Any

    from loopx_core.store.base import Store
    from loopx_core.store.choice import open_store
    from loopx_core.store.files import FileStore
    from loopx_core.store.roots import find_root

_HOMES = {"Store": "base", "open_store": "choice", "FileStore": "files", "find_root": "roots"}

__all__ = ["FileStore", "Store", "find_root", "open_store"]


def __getattr__(name: str) -> Any:
    """Load a name's module the first time it is asked for."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_load(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def _load(module: str) -> object:
    """`importlib.import_module(module)` without the importlib package (it loads warnings)."""
    __import__(module)
    return sys.modules[module]
