"""The PostgreSQL team store: imported only when a project uses it (psycopg only where libpq is in doubt).

The store's names load on first use, so a tick may import `libpq` alone and begin its
connection before it imports the store's modules (`store.choice.TickStart`).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on a tick
if TYPE_CHECKING:
    from loopx_core.store.postgres.common import StoreUnavailableError
    from loopx_core.store.postgres.store import PostgresStore

__all__ = ["PostgresStore", "StoreUnavailableError"]


def __getattr__(name: str) -> object:
    """`PostgresStore` and `StoreUnavailableError`, imported on first use."""
    if name == "PostgresStore":
        from loopx_core.store.postgres.store import PostgresStore

        return PostgresStore
    if name == "StoreUnavailableError":
        from loopx_core.store.postgres.common import StoreUnavailableError

        return StoreUnavailableError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
