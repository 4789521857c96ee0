"""The PostgreSQL team store (psycopg 3): imported only when a project uses it."""

from loopx_core.store.postgres.session import StoreUnavailableError
from loopx_core.store.postgres.store import PostgresStore

__all__ = ["PostgresStore", "StoreUnavailableError"]
