"""What only the PostgreSQL store has to show: its schema, its constraints, its transactions.

The schema has its own version: an older one is brought forward, a newer one refused
(exit 8) and left unchanged. The database itself refuses a second receipt for a turn and
any rewrite of the ledger. A `goal_lock` block is one transaction: all of it or nothing. A
connection lost between operations is replaced without the caller noticing; one lost inside
a transaction rolls it back and says so (exit 6), as does a server that is down, in one
line without any local path.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from loopx_core.errors import SchemaUnsupportedError
from loopx_core.ops import goals, spend, todos
from loopx_core.store.choice import open_target, record
from loopx_core.store.postgres import PostgresStore, StoreUnavailableError
from loopx_core.store.postgres.schema import LATEST, MIGRATIONS
from tests.conftest import T0, run_loopx
from tests.pg import Cluster, cluster_fixture  # noqa: F401  (the session fixture pg_cluster)


@pytest.fixture
def team(tmp_path: Path, pg_cluster: Cluster) -> Iterator[tuple[str, PostgresStore]]:
    """An initialised team store with goal `g` and agent `a`, recorded for the project at tmp_path/p."""
    dsn = pg_cluster.fresh_schema()
    (tmp_path / "p").mkdir()
    store = open_target(tmp_path / "p", dsn)
    assert isinstance(store, PostgresStore)
    store.init()
    goals.add_goal(store, "g", "Objective", T0)
    goals.register_agent(store, "a", [], T0)
    record(tmp_path / "p", dsn)
    yield dsn, store
    store.close()


def sql(dsn: str, statement: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        cursor = conn.execute(statement, params)  # type: ignore[arg-type]
        return cursor.fetchall() if cursor.description else []


def test_an_older_schema_is_brought_forward(tmp_path: Path, pg_cluster: Cluster) -> None:
    dsn = pg_cluster.fresh_schema()
    first_version, first_sql = MIGRATIONS[0]
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(first_sql)  # type: ignore[arg-type]
        conn.execute("UPDATE loopx_schema SET version = %s", (first_version,))
    store = open_target(tmp_path, dsn)
    try:
        assert store.init() is True
        assert sql(dsn, "SELECT version FROM loopx_schema") == [(LATEST,)]
        assert sql(dsn, "SELECT count(*) FROM pg_trigger WHERE tgname = 'loopx_events_append_only'") == [(1,)]
    finally:
        store.close()  # type: ignore[attr-defined]


def test_a_newer_schema_is_refused_with_exit_8_and_left_unchanged(
    tmp_path: Path, team: tuple[str, PostgresStore]
) -> None:
    dsn, _ = team
    sql(dsn, "UPDATE loopx_schema SET version = %s", (LATEST + 1,))
    before = sql(dsn, "SELECT doc::text FROM loopx_registry")
    for args in (
        ["status"],
        ["todo", "add", "-g", "g", "--title", "x"],
    ):
        result = run_loopx(*args, root=tmp_path / "p")
        assert result.exit_code == 8, (args, result.stderr)
        assert result.stderr.count("\n") == 1 and f"schema version {LATEST + 1}" in result.stderr
        assert "Traceback" not in result.stderr and "/tmp" not in result.stderr
    packet = run_loopx(
        "quota", "should-run", "-g", "g", "-a", "a", root=tmp_path / "p"
    )  # as for a newer file
    assert packet.exit_code == 4 and json.loads(packet.stdout)["quota"]["state"] == "blocked_health"
    fresh = open_target(tmp_path / "p", dsn)
    with pytest.raises(SchemaUnsupportedError):
        fresh.read_registry()
    fresh.close()  # type: ignore[attr-defined]
    assert sql(dsn, "SELECT doc::text FROM loopx_registry") == before
    assert sql(dsn, "SELECT version FROM loopx_schema") == [(LATEST + 1,)]


def test_a_newer_document_is_refused_like_a_newer_file(team: tuple[str, PostgresStore]) -> None:
    dsn, store = team
    sql(dsn, """UPDATE loopx_goals SET doc = json_build_object('schema_version', 2, 'goal_id', 'g')""")
    with pytest.raises(SchemaUnsupportedError, match="schema_version 2"):
        todos.add_todo(store, "g", "x", T0)
    assert sql(dsn, "SELECT doc::text FROM loopx_goals")[0][0] == '{"schema_version" : 2, "goal_id" : "g"}'


def test_the_database_refuses_a_second_receipt_and_any_rewrite(team: tuple[str, PostgresStore]) -> None:
    dsn, store = team
    spend.spend(store, "g", "a", T0, slots=1, turn_instance_id="ti-1")
    spend.void(store, "g", "ev-1", T0)
    second_spend = (
        "INSERT INTO loopx_events (goal_id, seq, event_id, kind, at, turn_instance_id, body) "
        "VALUES ('g', 9, 'ev-9', 'spend', now(), 'ti-1', '{}')"
    )
    second_void = (
        "INSERT INTO loopx_events (goal_id, seq, event_id, kind, at, voids_event_id, body) "
        "VALUES ('g', 9, 'ev-9', 'void', now(), 'ev-1', '{}')"
    )
    for statement in (second_spend, second_void):
        with pytest.raises(psycopg.errors.UniqueViolation):
            sql(dsn, statement)
    for statement in (
        "UPDATE loopx_events SET body = '{}'",
        "DELETE FROM loopx_events",
        "DELETE FROM loopx_run_index",
    ):
        with pytest.raises(psycopg.errors.RestrictViolation, match="append-only"):
            sql(dsn, statement)
    assert len(store.ledger_all("g")) == 2


def test_a_goal_lock_block_is_all_or_nothing(team: tuple[str, PostgresStore]) -> None:
    _, store = team
    todos.add_todo(store, "g", "Todo", T0)
    with pytest.raises(RuntimeError), store.goal_lock("g"):
        store.update_goal("g", lambda s: s.evidence.append("written inside"))
        spend.spend(store, "g", "a", T0, slots=1, turn_instance_id="ti-x")
        raise RuntimeError("the block failed after two writes")
    assert store.read_goal("g").evidence == [] and store.ledger_all("g") == []


def test_a_connection_lost_between_operations_is_replaced(
    team: tuple[str, PostgresStore], pg_cluster: Cluster
) -> None:
    _, store = team
    todos.add_todo(store, "g", "One", T0)
    sql(
        pg_cluster.dsn(),
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'loopx'",
    )
    todos.add_todo(store, "g", "Two", T0)  # reconnects and runs once
    assert [t.title for t in store.read_goal("g").todos] == ["One", "Two"]


def test_a_connection_lost_inside_a_transaction_rolls_it_back(
    team: tuple[str, PostgresStore], pg_cluster: Cluster
) -> None:
    _, store = team
    with pytest.raises(StoreUnavailableError, match="nothing of this change was saved"), store.goal_lock("g"):
        store.update_goal("g", lambda s: s.evidence.append("lost"))
        sql(
            pg_cluster.dsn(),
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'loopx'",
        )
        store.update_goal("g", lambda s: s.evidence.append("after"))
    assert store.read_goal("g").evidence == []


def test_a_server_that_is_down_is_one_line_exit_6_without_a_path(tmp_path: Path) -> None:
    (tmp_path / "p").mkdir()
    dsn = f"postgresql:///loopx?host={tmp_path}/nowhere"
    record(tmp_path / "p", dsn)
    result = run_loopx("status", root=tmp_path / "p", env={"LOOPX_LOCK_TIMEOUT": "1"})
    assert result.exit_code == 6, result.stderr
    assert result.stderr.count("\n") == 1 and "cannot reach the store postgresql:///loopx" in result.stderr
    assert str(tmp_path) not in result.stderr + result.stdout
    packet = run_loopx("quota", "should-run", "-g", "g", "-a", "a", "-f", "json", root=tmp_path / "p")
    assert packet.exit_code == 6 and json.loads(packet.stdout)["error"]["code"] == "store_unavailable"


def test_status_show_and_packets_name_the_store_redacted(
    tmp_path: Path, team: tuple[str, PostgresStore]
) -> None:
    root = tmp_path / "p"
    status = run_loopx("status", "-f", "json", root=root)
    assert json.loads(status.stdout)["store"] == "postgresql:///loopx"
    shown = run_loopx("store", "show", "-f", "json", root=root)
    assert json.loads(shown.stdout) == {
        "store": "postgresql:///loopx",
        "kind": "postgresql",
        "chosen_by": ".loopx/store.json",
        "schema_version": LATEST,
        "schema_supported": LATEST,
        "initialized": True,
    }
    packet = run_loopx("quota", "should-run", "-g", "g", "-a", "a", root=root)
    assert json.loads(packet.stdout)["store"] == "postgresql:///loopx"
    for output in (status.stdout, shown.stdout, packet.stdout):
        assert "search_path" not in output and "socket" not in output and "postgres&" not in output


def test_the_mcp_server_uses_the_team_store(tmp_path: Path, team: tuple[str, PostgresStore]) -> None:
    from tests.mcpclient import with_server

    _, store = team
    todos.add_todo(store, "g", "Todo", T0)

    async def body(session: object, tools: object) -> list[dict[str, object]]:
        import anyio

        results: list[dict[str, object]] = []

        async def call(agent: str) -> None:
            results.append(await tools("todo_claim", goal_id="g", todo_id="t1", agent_id=agent))  # type: ignore[operator]

        goals.register_agent(store, "b", [], T0)
        async with anyio.create_task_group() as group:  # concurrent calls: worker threads, one pool
            for agent in ("a", "b", "a", "b"):
                group.start_soon(call, agent)
        results.append(await tools("quota_should_run", goal_id="g", agent_id="a"))  # type: ignore[operator]
        return results

    results = with_server(tmp_path / "p", body)
    claims, packet = results[:4], results[4]
    winners = {r["claimed_by"] for r in claims if "claimed_by" in r}
    assert len(winners) == 1, claims
    assert all("claimed_by" in r or r["error"]["code"] == "conflict" for r in claims)  # type: ignore[index]
    assert packet["store"] == "postgresql:///loopx"


def _imported_by_should_run(root: Path) -> set[str]:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from loopx_core.cli.entry import main\n"
        "try:\n"
        f"    main(['--root', {str(root)!r}, 'quota', 'should-run', '-g', 'g', '-a', 'a'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted({m.split('.')[0] for m in sys.modules}), file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(json.loads(proc.stderr.strip().splitlines()[-1].replace("'", '"')))


def test_the_file_store_hot_path_never_imports_psycopg(
    tmp_path: Path, team: tuple[str, PostgresStore]
) -> None:
    from tests.builders import build_project

    build_project(tmp_path / "files", goal="g", agents=("a",))
    assert "psycopg" not in _imported_by_should_run(tmp_path / "files")
    on_postgres = _imported_by_should_run(tmp_path / "p")
    assert "psycopg" in on_postgres and "psycopg_pool" not in on_postgres  # psycopg, one connection


@pytest.mark.parametrize("version", [2, 0, None, "1"])
def test_a_store_choice_of_another_schema_is_refused_with_exit_8_and_untouched(
    tmp_path: Path, version: object
) -> None:
    from tests.builders import build_project

    build_project(tmp_path, goal="g", agents=("a",))
    path = tmp_path / ".loopx" / "store.json"
    path.write_text(json.dumps({"schema_version": version, "store": "files"}))
    before = path.read_bytes()
    for args in (["status"], ["store", "show"], ["todo", "add", "-g", "g", "--title", "x"]):
        result = run_loopx(*args, root=tmp_path)
        assert result.exit_code == 8 and result.stderr.count("\n") == 1, (args, result.stderr)
    assert path.read_bytes() == before
