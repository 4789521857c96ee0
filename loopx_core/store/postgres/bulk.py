"""The PostgreSQL store read and written whole (for `loopx store migrate`).

A read is one REPEATABLE READ transaction (one consistent picture while agents run); a write
is one transaction holding the migration lock and every goal's lock: the target holds the
whole state or nothing of it. Ledger rows go in with COPY.
"""

from __future__ import annotations

from typing import Any

from loopx_core.models import codec
from loopx_core.models.records import (
    GoalState,
    LedgerEvent,
    Registry,
    RunIndexEntry,
    SchedulerState,
    TurnJournal,
)
from loopx_core.store.postgres.schema import TABLES
from loopx_core.store.postgres.store import MIGRATE_LOCK, REGISTRY_LOCK, PostgresStore, goal_key
from loopx_core.store.snapshot import GoalDump, Snapshot, document, event_line, history_line, record_json

Conn = Any


def read(store: PostgresStore) -> Snapshot:
    """Every record in the store's schema (an empty or absent schema: an empty snapshot)."""
    version = store.schema_version()
    if version is None:
        return Snapshot()
    store._refuse_newer(version)
    return store.session.write([], lambda conn: _read(store, conn, snapshot=True))


def _read(store: PostgresStore, conn: Conn, *, snapshot: bool) -> Snapshot:
    if snapshot:
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
    out = Snapshot()
    where = store.label

    def rows(sql: str) -> list[tuple[Any, ...]]:
        return list(conn.execute(sql).fetchall())

    def goal(goal_id: str) -> GoalDump:
        return out.goals.setdefault(goal_id, GoalDump())

    for (doc,) in rows("SELECT doc::text FROM loopx_registry"):
        out.registry = _model(Registry, doc, "registry", where)
    for goal_id, doc in rows("SELECT goal_id, doc::text FROM loopx_goals ORDER BY goal_id"):
        goal(goal_id).state = _model(GoalState, doc, f"state of goal {goal_id!r}", where)
    for goal_id, body in rows("SELECT goal_id, body::text FROM loopx_events ORDER BY goal_id, seq"):
        goal(goal_id).events.append(_model(LedgerEvent, body, "a line of the ledger", where))
    for goal_id, key, doc in rows("SELECT goal_id, turn_key, doc::text FROM loopx_journals ORDER BY 1, 2"):
        goal(goal_id).journals[key] = _model(TurnJournal, doc, "turn journal", where)
    for goal_id, run_id, record, markdown in rows(
        "SELECT goal_id, run_id, record::text, markdown FROM loopx_runs ORDER BY 1, 2"
    ):
        goal(goal_id).runs[run_id] = (codec.loads(record), markdown)
    for goal_id, entry in rows("SELECT goal_id, entry::text FROM loopx_run_index ORDER BY goal_id, position"):
        goal(goal_id).history.append(_model(RunIndexEntry, entry, "a line of the run history", where))
    for goal_id, doc in rows("SELECT goal_id, doc::text FROM loopx_scheduler ORDER BY goal_id"):
        goal(goal_id).scheduler = _model(SchedulerState, doc, "scheduler state", where)
    out.goals = dict(sorted(out.goals.items()))
    return out


def _model(model: Any, text: str, what: str, where: str) -> Any:
    return codec.parse(text, model, what=what, where=f"{where} ({what})")


def write(store: PostgresStore, snapshot: Snapshot, *, replace: bool) -> None:
    """Write `snapshot` into the store in one transaction (`replace`: empty every table first)."""
    store.migrate_schema()
    locks = [MIGRATE_LOCK, REGISTRY_LOCK, *(goal_key(g) for g in snapshot.goals)]

    def body(conn: Conn) -> None:
        if replace:
            conn.execute("TRUNCATE " + ", ".join(TABLES))  # row triggers (append-only) do not fire
        if snapshot.registry is not None:
            conn.execute("INSERT INTO loopx_registry (doc) VALUES (%s::json)", (document(snapshot.registry),))
        for goal_id, dump in snapshot.goals.items():
            _write_goal(conn, goal_id, dump)

    store.session.write(locks, body)


def _write_goal(conn: Conn, goal_id: str, dump: GoalDump) -> None:
    if dump.state is not None:
        conn.execute(
            "INSERT INTO loopx_goals (goal_id, version, doc) VALUES (%s, %s, %s::json)",
            (goal_id, dump.state.version, document(dump.state)),
        )
    if dump.events:
        columns = "goal_id, seq, event_id, kind, at, turn_instance_id, voids_event_id, body"
        with conn.cursor().copy(f"COPY loopx_events ({columns}) FROM STDIN") as copy:
            for e in dump.events:
                copy.write_row(
                    (
                        goal_id,
                        e.seq,
                        e.event_id,
                        e.kind,
                        e.at,
                        e.turn_instance_id,
                        e.voids_event_id,
                        event_line(e),
                    )
                )
    for key, journal in dump.journals.items():
        conn.execute(
            "INSERT INTO loopx_journals (goal_id, turn_key, doc) VALUES (%s, %s, %s::json)",
            (goal_id, key, document(journal)),
        )
    for run_id, (record, markdown) in dump.runs.items():
        conn.execute(
            "INSERT INTO loopx_runs (goal_id, run_id, record, markdown) VALUES (%s, %s, %s::json, %s)",
            (goal_id, run_id, record_json(record), markdown),
        )
    if dump.history:
        conn.cursor().executemany(
            "INSERT INTO loopx_run_index (goal_id, position, run_id, entry) VALUES (%s, %s, %s, %s::json)",
            [(goal_id, n, e.run_id, history_line(e)) for n, e in enumerate(dump.history, start=1)],
        )
    if dump.scheduler is not None:
        conn.execute(
            "INSERT INTO loopx_scheduler (goal_id, doc) VALUES (%s, %s::json)",
            (goal_id, document(dump.scheduler)),
        )
