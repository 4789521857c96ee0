"""The PostgreSQL schema: its own version table and forward-only migrations.

Tables are created unqualified, so they land in the connection's current schema (the
first of `search_path`): several LoopX projects can share a database, each in a schema
chosen by the DSN's libpq `options=-csearch_path=NAME`. Every document column holds the
same JSON a file of the file store holds (type `json`: kept as written, key order too),
validated by the same models on every read. A store of a newer schema is refused, never
changed; an older one is brought forward in one transaction, under an advisory lock.
"""

from __future__ import annotations

SCHEMA_EXISTS = "SELECT to_regclass('loopx_schema') IS NOT NULL"
VERSION = "SELECT version FROM loopx_schema"

V1 = """
CREATE TABLE loopx_schema (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    version integer NOT NULL,
    migrated_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO loopx_schema (version) VALUES (0);
CREATE TABLE loopx_registry (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    doc json NOT NULL
);
CREATE TABLE loopx_goals (
    goal_id text PRIMARY KEY,
    version bigint NOT NULL,
    doc json NOT NULL
);
CREATE TABLE loopx_events (
    goal_id text NOT NULL,
    seq bigint NOT NULL,
    event_id text NOT NULL,
    kind text NOT NULL CHECK (kind IN ('spend', 'void')),
    at timestamptz NOT NULL,
    turn_instance_id text,
    voids_event_id text,
    body json NOT NULL,
    PRIMARY KEY (goal_id, seq),
    UNIQUE (goal_id, event_id)
);
-- exactly once, enforced by the database: one spend per turn instance, one void per spend
CREATE UNIQUE INDEX loopx_events_one_spend_per_turn
    ON loopx_events (goal_id, turn_instance_id) WHERE kind = 'spend' AND turn_instance_id IS NOT NULL;
CREATE UNIQUE INDEX loopx_events_one_void_per_event
    ON loopx_events (goal_id, voids_event_id) WHERE kind = 'void';
CREATE TABLE loopx_journals (
    goal_id text NOT NULL,
    turn_key text NOT NULL,
    doc json NOT NULL,
    PRIMARY KEY (goal_id, turn_key)
);
CREATE TABLE loopx_runs (
    goal_id text NOT NULL,
    run_id text NOT NULL,
    record json NOT NULL,
    markdown text NOT NULL,
    PRIMARY KEY (goal_id, run_id)
);
-- one history line per run: a retried writeback from any machine indexes it once
CREATE TABLE loopx_run_index (
    goal_id text NOT NULL,
    position bigint NOT NULL,
    run_id text NOT NULL,
    entry json NOT NULL,
    PRIMARY KEY (goal_id, position),
    UNIQUE (goal_id, run_id)
);
CREATE TABLE loopx_scheduler (
    goal_id text PRIMARY KEY,
    doc json NOT NULL
);
"""

V2 = """
-- the ledger and the run history are append-only: no role may rewrite or delete a line
CREATE FUNCTION loopx_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'loopx: % is append-only', TG_TABLE_NAME USING ERRCODE = 'restrict_violation';
END
$$;
CREATE TRIGGER loopx_events_append_only BEFORE UPDATE OR DELETE ON loopx_events
    FOR EACH STATEMENT EXECUTE FUNCTION loopx_append_only();
CREATE TRIGGER loopx_run_index_append_only BEFORE UPDATE OR DELETE ON loopx_run_index
    FOR EACH STATEMENT EXECUTE FUNCTION loopx_append_only();
-- should-run reads the window's tail by time
CREATE INDEX loopx_events_by_time ON loopx_events (goal_id, at);
"""

MIGRATIONS: tuple[tuple[int, str], ...] = ((1, V1), (2, V2))
"""(version, SQL) in order; a migration moves the schema from version - 1 to version."""
LATEST = MIGRATIONS[-1][0]
"""The schema version this loopx reads and writes."""

TABLES = (
    "loopx_registry",
    "loopx_goals",
    "loopx_events",
    "loopx_journals",
    "loopx_runs",
    "loopx_run_index",
    "loopx_scheduler",
)
"""Every table holding state (the migration's counts and checksums cover each)."""
