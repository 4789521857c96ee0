"""The PostgreSQL team store (psycopg 3): imported only when a project uses it."""

from __future__ import annotations

from loopx_core.store.postgres.common import StoreUnavailableError
from loopx_core.store.postgres.store import PostgresStore

__all__ = ["PostgresStore", "StoreUnavailableError"]
