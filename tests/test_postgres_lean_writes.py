"""Class: the store's writes over libpq (`lean_session`) are psycopg's, row for row and error for error.

A settlement command on the team store runs its transactions through libpq (ctypes) and never
imports psycopg. Proven on the real server: the four commands of a turn, run as processes,
write the same rows through libpq as through psycopg (libpq made unloadable), loading no
psycopg; whatever SQLSTATE the server answers a write with, in its statements or at COMMIT,
the lean store ends in psycopg's error (type, line, exit code) and psycopg's saved state; a
lock held elsewhere costs one lock timeout, not two; a transaction the lean path cannot begin
is psycopg's, and a connection cut under a write is replaced.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.store.postgres import PostgresStore
from tests.conftest import T0_ISO
from tests.lean_documents import documents
from tests.pg import NO_WIRE, Cluster, cluster_fixture, team_project  # noqa: F401  (the session fixture pg_cluster)

REPO = Path(__file__).resolve().parent.parent
COMMAND = """\
import json, sys
from functools import partial
from loopx_core.store import choice
from loopx_core.store.postgres import libpq
if sys.argv[1] == "psycopg":
    libpq._LIB.append(None)  # no libpq: every statement is psycopg's
if sys.argv[1] == "lean-objects":  # the settlement store in lean objects, as open_settle_store would open it
    choice.open_target = partial(choice.open_target, lean=True)
from loopx_core.cli.entry import main
code = 0
try:
    main(sys.argv[2:])
except SystemExit as stop:
    code = stop.code
sys.stdout.flush()
print(json.dumps([code, sorted({m.split(".")[0] for m in sys.modules})]), file=sys.stderr)
"""
TABLES = (
    "loopx_registry",
    "loopx_goals",
    "loopx_events",
    "loopx_journals",
    "loopx_runs",
    "loopx_run_index",
    "loopx_scheduler",
)


def loopx(root: Path, transport: str, *args: str) -> tuple[int, str, set[str]]:
    """One `loopx` command as a process, on `transport`: its code, its stdout, its top-level packages."""
    proc = subprocess.run(
        [sys.executable, "-c", COMMAND, transport, "--root", str(root), *args, "-f", "json"],
        capture_output=True,
        text=True,
        env={
            "LOOPX_COVERAGE": "off",
            "LOOPX_NOW": T0_ISO,
            "PATH": "",
            "HOME": str(root),
            **(NO_WIRE if transport in ("libpq", "psycopg") else {}),
        },
        cwd=REPO,
        check=True,
    )
    code, tops = json.loads(proc.stderr.strip().splitlines()[-1])
    return code, proc.stdout, set(tops)


def rows(dsn: str) -> dict[str, list[str]]:
    """Every LoopX table's rows as JSON text, sorted (what the database holds, byte for byte)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        return {
            table: sorted(
                r[0] for r in conn.execute(f"SELECT row_to_json(t)::text FROM {table} t").fetchall()
            )
            for table in TABLES
        }


def turns(root: Path, transport: str, shape: str) -> list[tuple[int, str]]:
    """A turn's four commands (or a failed validation's), then a second turn begun; each answer."""
    who = ["-g", "g", "-a", "builder"]
    answers = []
    code, out, tops = loopx(root, transport, "turn", "begin", *who, "-t", "t1")
    assert code == 0, out
    key = json.loads(out)["turn_key"]
    status = "failed" if shape == "failed" else "passed"
    commands = [
        ["writeback", *who, "-k", key, "-s", "done", "--validation-status", status, "-e", "log"],
        ["quota", "spend", *who, "-k", key],
        ["todo", "complete", *who, "-t", "t1", "--evidence", "ok"],
        ["turn", "begin", *who, "-t", "t2"],
        ["quota", "spend", *who, "-k", key],  # a replay: the receipt answers
        ["writeback", *who, "-k", "sha256:" + "0" * 64, "-s", "none"],  # refused: no such turn
        ["todo", "complete", *who, "-t", "t9", "--evidence", "ok"],  # refused: no such todo
        ["turn", "begin", *who, "-t", "t1"],  # refused once passed (t2's turn is open), else a replay
    ]
    answers.append((code, out))
    for args in commands:
        code, out, more = loopx(root, transport, *args)
        answers.append((code, out))
        tops |= more
    if transport != "psycopg":
        assert not {"psycopg", "psycopg_binary", "psycopg_pool"} & tops
    if transport != "psycopg":  # open_settle_store opens the lean-object store (`lean=True`)
        assert not {"pydantic", "pydantic_core"} & tops
    return answers


@pytest.mark.parametrize("shape", ["passed", "failed"])
def test_a_turn_writes_the_same_rows_through_libpq_as_through_psycopg(
    tmp_path: Path, pg_cluster: Cluster, shape: str
) -> None:
    written = {}
    for transport in ("lean", "lean-objects", "libpq", "psycopg"):
        root = tmp_path / transport
        root.mkdir()
        dsn, store = team_project(root, pg_cluster, todos=2)
        store.close()
        answers = turns(root, transport, shape)
        written[transport] = (answers, rows(dsn))
    assert written["lean"] == written["psycopg"] == written["lean-objects"] == written["libpq"]
    refused = [code != 0 for code, _ in written["lean"][0][-3:]]
    assert refused == [True, True, shape == "passed"]
    saved = written["lean"][1]
    assert saved["loopx_journals"] and bool(saved["loopx_events"]) == (
        shape == "passed"
    )  # spent if it passed


# -- failures, by SQLSTATE -------------------------------------------------------------------
@pytest.fixture
def team(tmp_path: Path, pg_cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, str]]:
    """A team project; a short lock timeout (psycopg's retries end soon)."""
    monkeypatch.setenv("LOOPX_LOCK_TIMEOUT", "0.3")
    dsn, store = team_project(tmp_path, pg_cluster, todos=1)
    store.close()
    yield tmp_path, dsn


def stores(root: Path, dsn: str) -> tuple[PostgresStore, PostgresStore]:
    """The same store twice: through libpq (as a command opens it), and through psycopg only."""
    lean = PostgresStore(root, dsn, "postgresql:///loopx")
    plain = PostgresStore(root, dsn, "postgresql:///loopx")
    plain.lean_link.enabled = False
    return lean, plain


def outcome(write: Callable[[], Any]) -> tuple[Any, ...]:
    """A write's error (type, line, exit code), or what it returned."""
    try:
        return ("ok", write())
    except Exception as error:
        return type(error).__name__, str(error), getattr(error, "exit_code", None)


def evidence(dsn: str) -> list[str]:
    """The goal's evidence as saved."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute("SELECT doc::text FROM loopx_goals WHERE goal_id = 'g'").fetchone()
    assert row is not None
    return list(json.loads(row[0])["evidence"])


def raising(dsn: str, sqlstate: str, *, at_commit: bool) -> None:
    """Make every update of a goal fail with `sqlstate` (at its statement, or deferred to COMMIT)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "CREATE OR REPLACE FUNCTION loopx_test_refuse() RETURNS trigger LANGUAGE plpgsql AS "
            f"$$BEGIN RAISE EXCEPTION 'refused for the test' USING ERRCODE = '{sqlstate}'; END$$"
        )
        conn.execute("DROP TRIGGER IF EXISTS loopx_test_refuse ON loopx_goals")
        if at_commit:
            conn.execute(
                "CREATE CONSTRAINT TRIGGER loopx_test_refuse AFTER UPDATE ON loopx_goals "
                "DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION loopx_test_refuse()"
            )
        else:
            conn.execute(
                "CREATE TRIGGER loopx_test_refuse BEFORE UPDATE ON loopx_goals "
                "FOR EACH ROW EXECUTE FUNCTION loopx_test_refuse()"
            )


KNOWN = ["55P03", "42501", "23505", "40P01", "40001", "23514", "22P02", "XX000", "57P01", "08006", "P0001"]
SQLSTATES = st.one_of(
    st.sampled_from(KNOWN),
    st.from_regex(r"[3-9A-HJ-Z][0-9A-Z][0-9A-Z]{3}", fullmatch=True),  # any class but success/warning
)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sqlstate=SQLSTATES, at_commit=st.booleans(), in_block=st.booleans())
def test_any_sqlstate_ends_as_psycopg_s_error(
    team: tuple[Path, str], sqlstate: str, at_commit: bool, in_block: bool
) -> None:
    root, dsn = team
    raising(dsn, sqlstate, at_commit=at_commit)
    seen = []
    for store in stores(root, dsn):
        before = evidence(dsn)

        def change(store: PostgresStore = store) -> None:
            if in_block:
                with store.goal_lock("g"):
                    store.update_goal("g", lambda s: s.evidence.append("x"))
            else:
                store.update_goal("g", lambda s: s.evidence.append("x"))

        seen.append((outcome(change), evidence(dsn) == before))
        store.close()
    assert seen[0] == seen[1]
    assert seen[0][0][0] != "ok" and seen[0][1]  # refused, and nothing saved


def test_a_held_lock_costs_the_lean_path_one_timeout(team: tuple[Path, str]) -> None:
    """Another session holds the goal's lock: one lock timeout, psycopg's error, psycopg never loaded."""
    root, dsn = team
    lean, plain = stores(root, dsn)
    key = ":goal:g"
    with psycopg.connect(dsn) as holder:
        holder.execute(f"SELECT pg_advisory_xact_lock(hashtextextended(current_schema() || '{key}', 0))")
        results = []
        for store in (lean, plain):
            started = time.monotonic()
            results.append(
                outcome(lambda store=store: store.update_goal("g", lambda s: s.evidence.append("x")))
            )
            results.append(time.monotonic() - started < 1.0)
        holder.rollback()
    assert results[0] == results[2] and results[0][0] == "LockTimeoutError"
    assert results[1] and results[3]  # 0.3 s each, not 0.6
    assert lean._session is None  # psycopg's path never opened
    lean.close()
    plain.close()


def test_a_cut_connection_is_psycopg_s_to_replace(team: tuple[Path, str], pg_cluster: Cluster) -> None:
    """The lean connection dies between two writes: the second runs once, through psycopg."""
    root, dsn = team
    lean, _ = stores(root, dsn)
    lean.update_goal("g", lambda s: s.evidence.append("one"))
    assert lean.lean_link.enabled and lean._session is None
    pg_cluster.sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'loopx'")
    lean.update_goal("g", lambda s: s.evidence.append("two"))
    assert evidence(dsn) == ["one", "two"]
    assert not lean.lean_link.enabled and lean._session is not None
    lean.close()


def test_another_thread_writes_through_psycopg(team: tuple[Path, str]) -> None:
    """The lean connection serves the thread that opened the store; another thread's write is psycopg's."""
    import threading

    root, dsn = team
    lean, _ = stores(root, dsn)
    lean.update_goal("g", lambda s: s.evidence.append("main"))
    worker = threading.Thread(target=lambda: lean.update_goal("g", lambda s: s.evidence.append("thread")))
    worker.start()
    worker.join()
    assert evidence(dsn) == ["main", "thread"]
    assert lean.lean_link.enabled and lean._session is not None
    lean.close()


def test_inside_a_psycopg_transaction_a_write_joins_it(team: tuple[Path, str]) -> None:
    """A write made inside psycopg's open transaction (the bulk copy's kind) is part of it: all or nothing."""
    from loopx_core.store.postgres.store import goal_key

    root, dsn = team
    lean, _ = stores(root, dsn)

    def body(conn: object) -> None:
        lean.update_goal("g", lambda s: s.evidence.append("inside"))
        raise RuntimeError("the transaction fails after the write")

    with pytest.raises(RuntimeError):
        lean.session.write([goal_key("g")], body)
    assert evidence(dsn) == []
    lean.close()


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@given(record=st.dictionaries(st.text(max_size=10), JSON, max_size=6))
def test_a_run_record_row_is_the_snapshot_s_text(record: dict[str, Any]) -> None:
    """The row `writes.record_json` gives (without the snapshot's models) is `snapshot.record_json`'s."""
    from loopx_core.store.postgres.writes import record_json
    from loopx_core.store.snapshot import record_json as snapshot_json

    assert record_json(record) == snapshot_json(record)


@settings(max_examples=150, deadline=None)
@given(document=documents())
def test_each_lean_row_is_the_one_pydantic_writes(document: tuple[str, bytes]) -> None:
    """Any stored document pydantic accepts, read lean, is written back as the row the pydantic
    store writes: the document, a ledger row's body, a history row's entry."""
    from loopx_core.errors import LoopxError
    from loopx_core.store import lean as lean_reads
    from loopx_core.store.postgres.lean_store import encode_compact, encode_event, encode_history

    name, data = document
    try:
        model = lean_reads.validated(data, name, where="a row", what="row")
    except LoopxError:
        return  # refused: nothing is written
    twin = lean_reads.from_model(model)
    assert encode_compact(twin) == model.model_dump_json()
    if name == "LedgerEvent":
        assert encode_event(twin) == model.model_dump_json(exclude_none=True)
    if name == "RunIndexEntry":
        dumped = model.model_dump(mode="json")
        assert encode_history(twin) == json.dumps(dumped, ensure_ascii=False, separators=(",", ":"))


def test_the_settlement_store_takes_its_root_as_a_string_without_pathlib(tmp_path: Path) -> None:
    """Given a string root, the lean-object store makes its `Path` only when asked (in a fresh
    interpreter: pathlib is not loaded until then), and it is the folder given."""
    script = (
        "import sys\n"
        "from loopx_core.store.choice import open_target\n"
        "store = open_target(sys.argv[1], 'dbname=x host=/nowhere', lean=True)\n"
        "loaded = 'pathlib' in sys.modules\n"
        "print(loaded, type(store).__name__, store.root == __import__('pathlib').Path(sys.argv[1]))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        capture_output=True,
        text=True,
        env={"LOOPX_COVERAGE": "off", "PATH": "", "HOME": str(tmp_path)},
        cwd=REPO,
        check=True,
    )
    assert proc.stdout.split() == ["False", "LeanSettlePostgresStore", "True"]
