"""The PostgreSQL team store: imported only when a project uses it (psycopg only where libpq is in doubt)."""

from loopx_core.store.postgres.common import StoreUnavailableError
from loopx_core.store.postgres.store import PostgresStore

__all__ = ["PostgresStore", "StoreUnavailableError"]
