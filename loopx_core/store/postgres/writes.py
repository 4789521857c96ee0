"""The store's writes that are more than one statement's line: a ledger row, a run record, a
history row (the unique constraints make each a receipt), and the schema version a migration reads."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from loopx_core.store.postgres.schema import VERSION

if TYPE_CHECKING:
    from typing import Any

    import psycopg

    from loopx_core.models.records import LedgerEvent

    Conn = psycopg.Connection[Any]


def insert_event(conn: Conn, goal_id: str, event: LedgerEvent, body: str) -> None:
    """One ledger row (the unique indexes refuse a second receipt for the same turn or spend)."""
    conn.execute(
        "INSERT INTO loopx_events (goal_id, seq, event_id, kind, at, turn_instance_id, voids_event_id, body) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s::json)",
        (
            goal_id,
            event.seq,
            event.event_id,
            event.kind,
            event.at,
            event.turn_instance_id,
            event.voids_event_id,
            body,
        ),
    )


def record_json(record: dict[str, Any]) -> str:
    """A run record's row: compact JSON, key order kept."""
    return json.dumps(record, ensure_ascii=False)


def upsert_run(conn: Conn, goal_id: str, run_id: str, record: dict[str, Any], markdown: str) -> None:
    """A run record (a retried writeback rewrites the record, never the history)."""
    conn.execute(
        "INSERT INTO loopx_runs (goal_id, run_id, record, markdown) VALUES (%s, %s, %s::json, %s) "
        "ON CONFLICT (goal_id, run_id) DO UPDATE SET record = EXCLUDED.record, markdown = EXCLUDED.markdown",
        (goal_id, run_id, record_json(record), markdown),
    )


def append_history(conn: Conn, goal_id: str, run_id: str, line: str) -> None:
    """One history row at the end (the unique constraint indexes each run once)."""
    conn.execute(
        "INSERT INTO loopx_run_index (goal_id, position, run_id, entry) "
        "SELECT %s, coalesce(max(position), 0) + 1, %s, %s::json FROM loopx_run_index WHERE goal_id = %s",
        (goal_id, run_id, line, goal_id),
    )


def schema_version_in(conn: Conn) -> int | None:
    """The schema version inside a write transaction (a savepoint keeps a missing table harmless)."""
    from psycopg import errors as pg_errors

    try:
        conn.execute("SAVEPOINT loopx_version")
        row = conn.execute(VERSION).fetchone()
        conn.execute("RELEASE SAVEPOINT loopx_version")
    except pg_errors.UndefinedTable:
        conn.execute("ROLLBACK TO SAVEPOINT loopx_version")
        return None
    return int(row[0]) if row else None
