"""Class: the lean transport (libpq through ctypes) answers exactly as psycopg does, or not at all.

A tick on the team store reads its rows through `loopx_core.store.postgres.libpq` instead of
psycopg. Proven against the real server, with generated inputs: libpq's DSN parsing gives
psycopg's `conninfo_to_dict` for every DSN, generated documents and parameters (text,
timestamps in any offset, limits) come back as the very rows psycopg gives; every hostile
state (a server that is not there, a role or database that is not, a wrong password, a
schema newer, older or missing, a NUL in the DSN, no libpq at all) ends in exactly the error
the psycopg path gives; a read inside a transaction, from another thread or on a pooled
store is psycopg's; and should-run prints the same bytes with and without the lean transport.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from psycopg.conninfo import conninfo_to_dict

from loopx_core.models import lean
from loopx_core.ops import todos
from loopx_core.store.lean import from_model
from loopx_core.store.postgres import PostgresStore, libpq, reads, wire
from loopx_core.store.postgres.common import LIBPQ_OPTIONS
from loopx_core.store.postgres.lean_reads import LeanPostgresReads
from loopx_core.store.postgres.schema import LATEST, MIGRATIONS
from tests.conftest import T0, T0_ISO
from tests.dsns import DSNS
from tests.pg import NO_WIRE, SUPERUSER, Cluster, cluster_fixture, server_bin, team_project  # noqa: F401  (the session fixture pg_cluster)

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


# -- the DSN, as libpq parses it ---------------------------------------------------------------
LIBPQ_KEYS = st.sampled_from(["host", "port", "dbname", "user", "options", "sslmode", "service", "bogus"])
ODD_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30)
ODD_DSNS = st.one_of(
    ODD_TEXT,
    ODD_TEXT.map(lambda t: "postgresql://" + t),
    st.lists(st.tuples(LIBPQ_KEYS, ODD_TEXT), max_size=4).map(lambda kv: " ".join(f"{k}={v}" for k, v in kv)),
)


def psycopg_parse(dsn: str) -> dict[str, str] | None:
    """psycopg's parameters for `dsn` (None: psycopg refuses it)."""
    try:
        return {k: str(v) for k, v in conninfo_to_dict(dsn).items() if v is not None}
    except Exception:
        return None


def lean_parse(dsn: str) -> dict[str, str] | None:
    """The lean parameters for `dsn` (None: in doubt)."""
    try:
        return libpq.conninfo(dsn)
    except libpq.Doubt:
        return None


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(DSNS, ODD_DSNS))
def test_libpq_parses_every_dsn_as_psycopg_does(text: str) -> None:
    lean_params, psycopg_params = lean_parse(text), psycopg_parse(text)
    if lean_params is None:  # in doubt only where psycopg refuses, or a NUL byte (psycopg would cut there)
        assert psycopg_params is None or "\x00" in text
    else:
        assert lean_params == psycopg_params


def test_the_libpq_loaded_is_the_one_psycopg_would_load(monkeypatch: pytest.MonkeyPatch) -> None:
    import psycopg_binary

    bundled = Path(psycopg_binary.__file__).parent.parent / "psycopg_binary.libs"
    for impl, expected in (
        ("", str(bundled)),
        ("binary", str(bundled)),
        ("python", "libpq.so.5"),
        ("bogus", None),
    ):
        monkeypatch.setenv("PSYCOPG_IMPL", impl)
        found = libpq.library_path()
        assert (found if found is None or found == "libpq.so.5" else str(Path(found).parent)) == expected
    monkeypatch.setattr(sys, "path", [p for p in sys.path if not (Path(p) / "psycopg").is_dir()])
    monkeypatch.setenv("PSYCOPG_IMPL", "")
    assert libpq.library_path() is None  # no psycopg installed: no lean transport either


def test_a_dsn_with_a_nul_byte_is_left_to_psycopg() -> None:
    assert lean_parse("host=a\x00b dbname=c") is None
    assert lean_parse("dbname='unterminated") is None and psycopg_parse("dbname='unterminated") is None


# -- rows -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tables(pg_cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A schema with LoopX's tables and nothing in them; its DSN."""
    dsn = pg_cluster.fresh_schema()
    store = PostgresStore(tmp_path_factory.mktemp("tables"), dsn, "postgresql:///loopx")
    store.migrate_schema()
    store.close()
    yield dsn


@pytest.fixture(scope="module", params=["libpq", "wire"])
def pair(tables: str, request: pytest.FixtureRequest) -> Iterator[tuple[Any, psycopg.Connection[Any]]]:
    """A lean connection (libpq's, or the wire protocol's over the socket) and a psycopg one
    (as the store opens it) to the same schema."""
    lean_conn = (
        libpq.LeanConnection(tables, LIBPQ_OPTIONS)
        if request.param == "libpq"
        else wire.WireConnection(tables)
    )
    begun = wire.begin(tables)  # the socket's DSN: the wire's unless told otherwise
    assert isinstance(begun, wire.WireConnection)
    begun.close()
    with psycopg.connect(tables, autocommit=True, **LIBPQ_OPTIONS) as conn:
        yield lean_conn, conn
    lean_conn.close()


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
IDS = st.from_regex(r"[a-z][a-z0-9_-]{0,20}", fullmatch=True)
ZONES = st.integers(-14 * 60, 14 * 60).map(lambda m: timezone(timedelta(minutes=m)))
MOMENTS = st.builds(
    lambda base, zone: base.replace(tzinfo=UTC).astimezone(zone),
    st.datetimes(datetime(1990, 1, 1), datetime(2090, 1, 1)),
    ZONES,
)


@EXAMPLES
@given(docs=st.dictionaries(IDS, JSON, min_size=1, max_size=5), indent=st.sampled_from([None, 1]))
def test_documents_come_back_as_psycopg_gives_them(
    pair: tuple[Any, psycopg.Connection[Any]], docs: dict[str, Any], indent: int | None
) -> None:
    lean_conn, conn = pair
    conn.execute("TRUNCATE loopx_goals")
    for goal_id, doc in docs.items():
        text = json.dumps(doc, indent=indent, ensure_ascii=False)
        conn.execute(
            "INSERT INTO loopx_goals (goal_id, version, doc) VALUES (%s, 1, %s::json)", (goal_id, text)
        )
    for goal_id in [*docs, "missing"]:
        expected = conn.execute(reads.GOAL, (goal_id,)).fetchall()  # type: ignore[arg-type]
        assert lean_conn.rows(reads.GOAL, (goal_id,)) == expected
    assert (
        lean_conn.rows(reads.SCHEMA_EXISTS, ()) == conn.execute(reads.SCHEMA_EXISTS).fetchall() == [(True,)]
    )
    assert lean_conn.rows(reads.VERSION, ()) == conn.execute(reads.VERSION).fetchall() == [(LATEST,)]


@EXAMPLES
@given(ats=st.lists(MOMENTS, min_size=1, max_size=8), since=MOMENTS, last=st.none() | st.integers(0, 10))
def test_timestamps_and_limits_select_what_psycopg_selects(
    pair: tuple[Any, psycopg.Connection[Any]],
    ats: list[datetime],
    since: datetime,
    last: int | None,
) -> None:
    lean_conn, conn = pair
    conn.execute("TRUNCATE loopx_events, loopx_run_index")
    for seq, at in enumerate(ats, start=1):
        body = json.dumps({"seq": seq, "at": at.isoformat()})
        conn.execute(
            "INSERT INTO loopx_events (goal_id, seq, event_id, kind, at, body) VALUES ('g', %s, %s, 'spend', %s, %s::json)",
            (seq, f"e{seq}", at, body),
        )
        conn.execute(
            "INSERT INTO loopx_run_index (goal_id, position, run_id, entry) VALUES ('g', %s, %s, %s::json)",
            (seq, f"r{seq}", body),
        )
    for sql, params in ((reads.EVENTS_SINCE, ("g", since)), (reads.HISTORY, ("g", last))):
        assert lean_conn.rows(sql, params) == conn.execute(sql, params).fetchall()  # type: ignore[arg-type]


CELLS = st.tuples(
    st.none() | st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=12),
    st.none() | st.sampled_from(["", " ", "x"]),
    st.none() | st.integers(-(2**63), 2**63 - 1),
    st.none() | st.integers(-(2**15), 2**15 - 1),
    st.none() | st.booleans(),
)


@EXAMPLES
@given(rows=st.lists(CELLS, max_size=6))
def test_every_value_comes_back_as_psycopg_gives_it_null_and_empty_apart(
    pair: tuple[Any, psycopg.Connection[Any]], rows: list[tuple[Any, ...]]
) -> None:
    """One call into libpq per value: an empty text is not NULL, each type reads as psycopg's,
    in a result of one column (its own loop) and of several."""
    lean_conn, conn = pair
    conn.execute("CREATE TABLE IF NOT EXISTS cells (k int, t text, v varchar, n int8, s int2, b bool)")
    conn.execute("TRUNCATE cells")
    for k, row in enumerate(rows):
        conn.execute("INSERT INTO cells VALUES (%s, %s, %s, %s, %s, %s)", (k, *row))
    for sql in (
        "SELECT t, v, n, s, b FROM cells ORDER BY k",
        "SELECT t FROM cells ORDER BY k",
        "SELECT v FROM cells ORDER BY k",
    ):
        assert (
            lean_conn.rows(sql, ())
            == conn.execute(sql).fetchall()
            == [
                row[:1] if sql == "SELECT t FROM cells ORDER BY k" else row[1:2] if "SELECT v" in sql else row
                for row in rows
            ]
        )


def test_what_the_lean_transport_does_not_know_is_a_doubt(
    pair: tuple[Any, psycopg.Connection[Any]],
) -> None:
    lean_conn, _ = pair
    for sql, params in (
        ("SELECT doc FROM loopx_goals", ()),  # json, not ::text: psycopg would parse it
        ("SELECT now()", ()),  # a timestamp result
        ("SELECT 1 WHERE 'a' LIKE '%'", ()),  # a literal %
        (reads.GOAL, (1.5,)),  # a parameter type it does not write
        (reads.GOAL, ("a\x00b",)),
        ("SELECT nothing FROM nowhere", ()),  # a statement the server refuses
    ):
        with pytest.raises(libpq.Doubt):
            lean_conn.rows(sql, params)
    assert lean_conn.rows(reads.VERSION, ()) == [(LATEST,)]  # a refused statement leaves it usable


def test_a_server_notice_is_not_printed(
    pair: tuple[Any, psycopg.Connection[Any]], capfd: pytest.CaptureFixture[str]
) -> None:
    lean_conn, conn = pair
    conn.execute(
        "CREATE OR REPLACE FUNCTION loud() RETURNS int LANGUAGE plpgsql AS "
        "$$ BEGIN RAISE WARNING 'loud'; RAISE NOTICE 'louder'; RETURN 1; END $$"
    )
    capfd.readouterr()
    assert lean_conn.rows("SELECT loud()", ()) == conn.execute("SELECT loud()").fetchall() == [(1,)]
    assert capfd.readouterr() == ("", "")  # libpq's own notice processor would print both to stderr


# -- a tick's reads, lean and validated, on every hostile state ---------------------------------
@pytest.fixture
def team(tmp_path: Path, pg_cluster: Cluster) -> Iterator[tuple[Path, str, PostgresStore]]:
    """A team store with goal `g`, agent `builder` and two todos, recorded for the project."""
    dsn, store = team_project(tmp_path, pg_cluster, todos=2)
    yield tmp_path, dsn, store
    store.close()


def outcome(read: Callable[[], Any]) -> tuple[Any, ...]:
    """What a read gives: its error (type, one line, exit code), or its value as plain data."""
    try:
        value = read()
    except Exception as error:
        return type(error).__name__, str(error), getattr(error, "exit_code", None)
    if isinstance(value, list):
        return "ok", [lean.dump(v if isinstance(v, lean._Lean) else from_model(v)) for v in value]
    return "ok", lean.dump(value if isinstance(value, lean._Lean) else from_model(value))


def tick_reads(store: Any) -> list[tuple[Any, ...]]:
    """Every read a tick makes, each one's outcome."""
    return [
        outcome(store.read_registry),
        outcome(lambda: store.read_goal("g")),
        outcome(lambda: store.ledger_since("g", T0 - timedelta(days=1))),
        outcome(lambda: store.read_scheduler("g")),
        outcome(lambda: store.read_history("g", last=5)),
    ]


def both(root: Path, dsn: str) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], PostgresStore]:
    """A tick's reads through psycopg and the models, then through a new store's lean reads."""
    validated_store = PostgresStore(root, dsn, "postgresql:///loopx")
    lean_store = PostgresStore(root, dsn, "postgresql:///loopx")
    try:
        return tick_reads(validated_store), tick_reads(lean_store.lean_reads()), lean_store
    finally:
        validated_store.close()
        lean_store.close()


def test_a_sound_store_is_read_without_psycopg_and_gives_the_same_documents(
    team: tuple[Path, str, PostgresStore],
) -> None:
    root, dsn, _ = team
    validated, lean_read, lean_store = both(root, dsn)
    assert lean_read == validated and all(kind == "ok" for kind, *_ in validated)
    assert lean_store._session is None  # psycopg's path never opened


def with_socket(dsn: str, socket: str) -> str:
    base, _, query = dsn.partition("?")
    kept = "&".join(p for p in query.split("&") if not p.startswith("host="))
    return f"{base}?host={socket}&{kept}"


HOSTILE: dict[str, Callable[[str, Cluster], str]] = {
    "server-down": lambda dsn, _: with_socket(dsn, "%2Fnonexistent"),
    "no-such-role": lambda dsn, _: dsn.replace(f"user={SUPERUSER}", "user=nobody"),
    "no-such-database": lambda dsn, _: dsn.replace("///loopx?", "///nowhere?"),
    "bad-option": lambda dsn, _: dsn + "&sslmode=bogus",
    "nul-in-dsn": lambda dsn, _: dsn.replace("loopx?", "lo\x00opx?"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_store_that_cannot_be_reached_fails_as_psycopg_fails(
    team: tuple[Path, str, PostgresStore], pg_cluster: Cluster, case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, dsn, _ = team
    monkeypatch.setenv("LOOPX_LOCK_TIMEOUT", "0.3")  # the psycopg path's connect retries, kept short
    validated, lean_read, _ = both(root, HOSTILE[case](dsn, pg_cluster))
    assert lean_read == validated
    assert validated[0][0] != "ok"


def test_a_server_that_never_answers_costs_the_lean_transport_2_seconds_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A port that takes the connection and never answers: the lean attempt gives up at libpq's
    least timeout, psycopg's path then waits its own 10 s and says why (not 10 s twice)."""
    import socket
    import time

    monkeypatch.setenv("LOOPX_LOCK_TIMEOUT", "0.3")
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        store = PostgresStore(
            tmp_path, f"host=127.0.0.1 port={port} dbname=x", f"postgresql://127.0.0.1:{port}/x"
        )
        started = time.monotonic()
        kind, message, code = outcome(store.lean_reads().read_registry)
        elapsed = time.monotonic() - started
        store.close()
    assert (kind, code) == ("StoreUnavailableError", 6) and message.startswith(
        f"cannot reach the store postgresql://127.0.0.1:{port}/x: "
    )
    assert "\n" not in message
    assert 11.5 <= elapsed < 16, elapsed  # 2 s lean + 10 s psycopg


STATES: dict[str, str] = {
    "newer-schema": "UPDATE loopx_schema SET version = 99",
    "no-schema": "DROP TABLE loopx_schema",
    "no-registry": "DELETE FROM loopx_registry",
    "no-goal-row": "DELETE FROM loopx_goals",
    "damaged-goal-row": 'UPDATE loopx_goals SET doc = \'{"schema_version": 1, "goal_id": 7}\'',
    "no-tables": "DROP TABLE loopx_goals, loopx_events CASCADE",
}


@pytest.mark.parametrize("case", sorted(STATES))
def test_a_damaged_or_foreign_schema_fails_as_psycopg_fails(
    team: tuple[Path, str, PostgresStore], case: str
) -> None:
    root, dsn, _ = team
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(STATES[case])  # type: ignore[arg-type]
    validated, lean_read, _ = both(root, dsn)
    assert lean_read == validated
    assert any(kind != "ok" for kind, *_ in validated)


def test_a_server_restarted_under_a_tick_is_read_through_psycopg(
    team: tuple[Path, str, PostgresStore], pg_cluster: Cluster
) -> None:
    root, dsn, _ = team
    store = PostgresStore(root, dsn, "postgresql:///loopx")
    try:
        reads_ = store.lean_reads()
        expected = [outcome(reads_.read_registry), outcome(lambda: reads_.read_goal("g"))]
        assert store.lean_link.enabled and store._session is None
        pg_cluster.restart()  # the lean connection is cut between two reads
        assert [outcome(reads_.read_registry), outcome(lambda: reads_.read_goal("g"))] == expected
        assert not store.lean_link.enabled and store._session is not None  # psycopg reconnected
    finally:
        store.close()


def test_an_older_schema_is_brought_forward_by_a_lean_read(tmp_path: Path, pg_cluster: Cluster) -> None:
    dsn = pg_cluster.fresh_schema()
    first_version, first_sql = MIGRATIONS[0]
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(first_sql)  # type: ignore[arg-type]
        conn.execute("UPDATE loopx_schema SET version = %s", (first_version,))
    store = PostgresStore(tmp_path, dsn, "postgresql:///loopx")
    try:
        assert outcome(store.lean_reads().read_registry)[0] == "NotFoundError"  # migrated, then no registry
        assert store.schema_version() == LATEST
    finally:
        store.close()


def test_without_libpq_the_reads_are_psycopg_s(
    team: tuple[Path, str, PostgresStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, dsn, _ = team
    monkeypatch.setattr(libpq, "_LIB", [None])  # as if no libpq could be loaded here
    validated, lean_read, lean_store = both(root, dsn)
    assert lean_read == validated and validated[0][0] == "ok"
    assert lean_store._session is None  # a unix socket needs no libpq: the wire read it
    for name, value in NO_WIRE.items():
        monkeypatch.setenv(name, value)
    validated, lean_read, lean_store = both(root, dsn)
    assert lean_read == validated and validated[0][0] == "ok"
    assert lean_store._session is not None


def test_a_wrong_password_fails_as_psycopg_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server of its own that asks for a password (the shared one trusts its socket)."""
    bindir = server_bin()
    if bindir is None:
        pytest.skip("PostgreSQL server binaries not installed")
    base = Path(tempfile.mkdtemp(prefix="loopx-pgpw-"))
    cluster = Cluster(base, bindir)
    pwfile = base / "pw"
    pwfile.write_text("right-password\n")
    try:
        cluster.socket.mkdir(parents=True)
        if os.geteuid() == 0:
            for path in (base, cluster.socket, pwfile):
                shutil.chown(path, SUPERUSER)
        cluster._run(
            "initdb",
            "-D",
            str(cluster.data),
            "-U",
            SUPERUSER,
            "-A",
            "scram-sha-256",
            f"--pwfile={pwfile}",
            "--no-sync",
        )
        cluster.start()
        monkeypatch.setenv("PGPASSWORD", "wrong-password")
        monkeypatch.setenv("LOOPX_LOCK_TIMEOUT", "0.3")
        validated, lean_read, _ = both(tmp_path, cluster.dsn("postgres"))
        assert lean_read == validated
        assert (
            validated[0][0] == "StoreUnavailableError" and "password authentication failed" in validated[0][1]
        )
        # the wire transport speaks no password: a server that asks for one is libpq's, at once
        monkeypatch.delenv("PGPASSWORD")
        begun = wire.begin(cluster.dsn("postgres") + "&password=right-password")
        assert isinstance(begun, wire.WireConnection)
        assert begun.rows("SELECT current_user::text, 1", ()) == [(SUPERUSER, 1)]
        assert begun._libpq is not None and begun._sock is None and not begun.in_transaction
        begun.execute("BEGIN", simple=True)
        assert begun.in_transaction and begun.encrypted() is False
        begun.close()
    finally:
        cluster.stop("immediate")
        shutil.rmtree(base, ignore_errors=True)


# -- where the lean transport stands aside -----------------------------------------------------
def test_a_read_inside_a_transaction_sees_the_transaction(team: tuple[Path, str, PostgresStore]) -> None:
    _, _, store = team
    reads_ = store.lean_reads()
    before = reads_.read_goal("g").version
    with store.goal_lock("g"):
        store.update_goal("g", lambda state: None)
        assert (
            reads_.read_goal("g").version == before + 1
        )  # the open transaction's row, not the committed one
    assert reads_.read_goal("g").version == before + 1


def test_a_read_from_another_thread_or_a_pooled_store_is_psycopg_s(
    team: tuple[Path, str, PostgresStore],
) -> None:
    root, dsn, _ = team
    store = PostgresStore(root, dsn, "postgresql:///loopx")
    pooled = PostgresStore(root, dsn, "postgresql:///loopx", pooled=True)
    try:
        seen: list[tuple[Any, ...]] = []
        thread = threading.Thread(target=lambda: seen.extend(tick_reads(store.lean_reads())))
        thread.start()
        thread.join()
        assert seen == tick_reads(pooled.lean_reads()) == tick_reads(store.lean_reads())
        assert pooled.lean_link.enabled is False and store._session is not None
    finally:
        store.close()
        pooled.close()


@pytest.mark.parametrize("pooled", [False, True])
def test_the_session_is_one_whichever_thread_asks_first(tmp_path: Path, pooled: bool) -> None:
    store = PostgresStore(tmp_path, "host=/nonexistent dbname=x", "postgresql:///x", pooled=pooled)
    barrier = threading.Barrier(8)
    seen: list[object] = []

    def touch() -> None:
        barrier.wait()
        seen.append(store.session)

    threads = [threading.Thread(target=touch) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(seen) == 8 and len({id(session) for session in seen}) == 1  # one transaction state, one pool
    store.close()


def test_a_store_on_a_string_root_is_the_same_store(tmp_path: Path) -> None:
    on_text = PostgresStore(str(tmp_path), "dbname=x", "postgresql:///x")
    on_path = PostgresStore(tmp_path, "dbname=x", "postgresql:///x")
    assert on_text.state_dir == on_path.state_dir == tmp_path / ".loopx"


def test_lean_reads_are_the_store_s(team: tuple[Path, str, PostgresStore]) -> None:
    _, _, store = team
    reads_ = store.lean_reads()
    assert isinstance(reads_, LeanPostgresReads)
    assert (reads_.root, reads_.label) == (store.root, store.label)


# -- whole processes ---------------------------------------------------------------------------
TICK = """\
import json, sys
from loopx_core.store.postgres import libpq
if sys.argv[3] == "no-libpq":
    libpq._LIB.append(None)
from loopx_core.cli.entry import main
code = 0
try:
    main(["--root", sys.argv[1], "quota", "should-run", "-g", "g", "-a", "builder", "-f", sys.argv[2]])
except SystemExit as stop:
    code = stop.code
sys.stdout.flush()
print(json.dumps([code, sorted(sys.modules)]), file=sys.stderr)
"""


def tick(
    root: Path, fmt: str, transport: str, env: dict[str, str] | None = None
) -> tuple[int, str, set[str]]:
    """should-run in a new interpreter: its exit code, its stdout and the top-level packages it loaded."""
    proc = subprocess.run(
        [sys.executable, "-c", TICK, str(root), fmt, transport],
        capture_output=True,
        text=True,
        env={
            "LOOPX_COVERAGE": "off",
            "LOOPX_NOW": T0_ISO,
            "PATH": "",
            "HOME": str(root),
            **(NO_WIRE if transport != "lean" else {}),
            **(env or {}),
        },
        cwd=REPO,
        check=True,
    )
    code, modules = json.loads(proc.stderr.strip().splitlines()[-1])
    return code, proc.stdout, {m.split(".")[0] for m in modules}


@pytest.mark.parametrize("fmt", ["json", "markdown"])
def test_should_run_prints_the_same_bytes_with_or_without_libpq(
    team: tuple[Path, str, PostgresStore], fmt: str
) -> None:
    root, _, _ = team
    code, out, _ = tick(root, fmt, "lean")  # the wire transport, over the unix socket
    assert (code, out) == tick(root, fmt, "no-libpq")[:2]
    assert (code, out) == tick(root, fmt, "libpq")[:2]
    assert (code, out) == tick(root, fmt, "libpq", {"PSYCOPG_IMPL": "python"})[:2]  # the system libpq
    assert code == 0 and "work_todo" in out


def test_the_lean_reads_themselves_import_no_psycopg(team: tuple[Path, str, PostgresStore]) -> None:
    """A tick through the lean reads loads no psycopg (`dsn.parse` asks libpq too), nor pathlib: the store takes its root as a string, as a tick on the file store does."""
    root, dsn, _ = team
    script = (
        "import json, sys\n"
        "from loopx_core.store.postgres import PostgresStore\n"
        "from loopx_core.ops.tick import tick_packet\n"
        "from datetime import datetime, UTC\n"
        "store = PostgresStore(sys.argv[1], sys.argv[2], 'postgresql:///loopx')\n"
        "packet = tick_packet(store, 'g', 'builder', datetime(2026, 11, 29, 12, tzinfo=UTC))\n"
        "print(json.dumps([packet['decision'], sorted({m.split('.')[0] for m in sys.modules})]))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, str(root), dsn],
        capture_output=True,
        text=True,
        env={"LOOPX_COVERAGE": "off", "PATH": "", "HOME": str(root)},
        cwd=REPO,
        check=True,
    )
    decision, tops = json.loads(proc.stdout)
    assert decision == "run"
    assert not {"psycopg", "psycopg_binary", "psycopg_pool", "pydantic", "typer", "pathlib"} & set(tops)


def test_should_run_on_a_team_store_imports_no_psycopg_nor_pathlib(
    team: tuple[Path, str, PostgresStore],
) -> None:
    root, _, _ = team
    code, _, tops = tick(root, "json", "lean")
    assert code == 0
    assert not {"psycopg", "psycopg_binary", "pydantic", "typer", "pathlib"} & tops


@pytest.mark.parametrize("transport", ["lean", "libpq", "no-libpq"])
def test_a_client_encoding_from_the_environment_reads_every_character(
    team: tuple[Path, str, PostgresStore], transport: str
) -> None:
    """`PGCLIENTENCODING=LATIN1` cannot hold a zero-width space or a CJK title: both transports
    connect in UTF8 whatever the environment says, so a tick reads them as on any other day."""
    root, _, store = team
    todos.add_todo(store, "g", "\u200b\u6f22\u5b57 title", T0)
    plain = tick(root, "json", transport)
    latin = tick(root, "json", transport, {"PGCLIENTENCODING": "LATIN1"})
    assert latin[:2] == plain[:2] and latin[0] == 0
