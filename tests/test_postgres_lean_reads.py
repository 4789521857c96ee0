"""A tick on the PostgreSQL store reads through the lean readers: no pydantic, same answers.

`PostgresStore.lean_reads()` parses each row as the file store's lean reads parse each file
(the generated readers of `loopx_core.models.lean`, pydantic on doubt), so should-run on a
team store loads no pydantic, and every row the models accept or refuse, the lean reads
accept or refuse alike, with the same error. The lean reads fetch their rows through libpq
(`store.postgres.libpq`), the validated ones through psycopg: each comparison here covers
both transports, on hand-made damage and on generated rows.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.models import lean
from loopx_core.models.scheduler import SchedulerState
from loopx_core.store.lean import for_reading, from_model
from loopx_core.store.postgres import PostgresStore
from loopx_core.store.postgres.lean_reads import LeanPostgresReads
from tests.builders import settle_turn
from tests.conftest import T0
from tests.pg import NO_WIRE, Cluster, cluster_fixture, team_project  # noqa: F401  (the session fixture pg_cluster)
from tests.probe import START_UP, probe

FLOOR = ("pydantic", "pydantic_core", "typer", "click", "jinja2", "rich", "mcp", "pluggy")
NO_CTYPES = ("ctypes", "struct", "types")
"""The `ctypes` package and what it imports (about 2 ms): the lean transport's C types are
`store.postgres.cdata`'s, from `_ctypes` alone (tests/test_cdata.py)."""
NO_LIBPQ = ("_ctypes", "loopx_core.store.postgres.libpq", "loopx_core.store.postgres.cdata")
"""On a unix socket the wire transport (`store.postgres.wire`) needs no libpq, hence no `_ctypes`."""


@pytest.fixture
def team(tmp_path: Path, pg_cluster: Cluster) -> Iterator[tuple[Path, str, PostgresStore]]:
    """A busy team store: a spent turn still open (ledger, journal, run history), a scheduler entry."""
    dsn, store = team_project(tmp_path, pg_cluster, todos=3)
    settle_turn(store, "builder", "t1")  # type: ignore[arg-type]  # spent, its closeout still open
    store.write_scheduler(SchedulerState.model_validate({"schema_version": 1, "goal_id": "g"}))
    yield tmp_path, dsn, store
    store.close()


def test_a_tick_on_a_team_store_imports_no_pydantic(team: tuple[Path, str, PostgresStore]) -> None:
    root, _, _ = team
    ran = probe(root, ["quota", "should-run", "-g", "g", "-a", "builder", "-f", "json"])
    assert json.loads(ran.stdout)["store"].startswith("postgresql://")
    assert (ran.exit_code, ran.tops(FLOOR)) == (0, set())
    assert ran.modules & set(START_UP + NO_CTYPES + NO_LIBPQ) == set()
    assert "loopx_core.store.postgres.wire" in ran.modules  # the lean transport did run, over the socket
    on_libpq = probe(root, ["quota", "should-run", "-g", "g", "-a", "builder", "-f", "json"], env=NO_WIRE)
    assert on_libpq.stdout == ran.stdout
    assert on_libpq.modules & set(START_UP + NO_CTYPES) == set()
    assert "_ctypes" in on_libpq.modules and on_libpq.tops(FLOOR) == set()  # libpq's lean transport ran


def test_a_turn_on_a_team_store_starts_as_lightly_as_a_tick(team: tuple[Path, str, PostgresStore]) -> None:
    """The settlement commands on PostgreSQL load none of the start-up modules a tick avoids."""
    root, _, _ = team
    argv = ["todo", "complete", "-g", "g", "-a", "builder", "-t", "t1", "--evidence", "ok", "-f", "json"]
    ran = probe(root, argv)  # the fixture's spent turn, closed
    assert ran.exit_code == 0, ran.stdout
    assert json.loads(ran.stdout)["status"] == "done"
    assert ran.modules & set(START_UP + NO_CTYPES + NO_LIBPQ) == set()


def test_a_tick_reads_a_team_store_the_lean_way(team: tuple[Path, str, PostgresStore]) -> None:
    _, _, store = team
    reads = for_reading(store)
    assert isinstance(reads, LeanPostgresReads)
    assert for_reading(reads) is reads
    assert (reads.root, reads.label) == (store.root, store.label)


def outcome(read: Callable[[], Any]) -> tuple[str, Any]:
    """What a read gives: its error (type and one line), or its value as plain data."""
    try:
        value = read()
    except Exception as error:
        return type(error).__name__, str(error)
    if isinstance(value, list):
        return "ok", [lean.dump(v if isinstance(v, lean._Lean) else from_model(v)) for v in value]
    return "ok", lean.dump(value if isinstance(value, lean._Lean) else from_model(value))


DAMAGE: dict[str, Callable[[dict[str, Any]], Any]] = {
    "as-is": lambda doc: doc,
    "newer-schema": lambda doc: {**doc, "schema_version": 2},
    "no-schema": lambda doc: {k: v for k, v in doc.items() if k != "schema_version"},
    "unknown-field": lambda doc: {**doc, "surprise": True},
    "not-an-object": lambda doc: [doc],
    "a-string": lambda doc: "text",
    "bad-goal-id": lambda doc: {**doc, "goal_id": "../up"},
}
ROWS: dict[str, tuple[str, str]] = {
    "registry": ("loopx_registry", "doc"),
    "goal": ("loopx_goals", "doc"),
    "scheduler": ("loopx_scheduler", "doc"),
    "journal": ("loopx_journals", "doc"),
    "ledger": ("loopx_events", "body"),
    "history": ("loopx_run_index", "entry"),
}


def paired_reads(
    store: PostgresStore, kind: str, turn_key: str
) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """The validated read of a row `kind` and its lean twin."""
    lean_reads = store.lean_reads()
    return {
        "registry": (store.read_registry, lean_reads.read_registry),
        "goal": (lambda: store.read_goal("g"), lambda: lean_reads.read_goal("g")),
        "scheduler": (lambda: store.read_scheduler("g"), lambda: lean_reads.read_scheduler("g")),
        "journal": (
            lambda: store.read_journal("g", turn_key),
            lambda: lean_reads.read_journal("g", turn_key),
        ),
        "ledger": (lambda: store.ledger_since("g", T0), lambda: lean_reads.ledger_since("g", T0)),
        "history": (lambda: store.read_history("g"), lambda: lean_reads.read_history("g", last=None)),
    }[kind]


def rewrite(dsn: str, kind: str, change: Callable[[Any], Any]) -> list[tuple[str, str]]:
    """Rewrite every row of `kind` with `change` (past the append-only triggers); (new, old) texts."""
    table, column = ROWS[kind]
    done = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SET session_replication_role = replica")
        for (doc,) in conn.execute(f"SELECT {column}::text FROM {table}").fetchall():  # type: ignore[call-overload]
            changed = json.dumps(change(json.loads(doc)))
            conn.execute(f"UPDATE {table} SET {column} = %s::json WHERE {column}::text = %s", (changed, doc))  # type: ignore[call-overload]
            done.append((changed, doc))
    return done


@pytest.mark.parametrize("damage", sorted(DAMAGE))
@pytest.mark.parametrize("kind", sorted(ROWS))
def test_lean_and_validated_reads_accept_and_refuse_the_same_rows(
    team: tuple[Path, str, PostgresStore], kind: str, damage: str
) -> None:
    _, dsn, store = team
    turn_key = store.read_goal("g").open_turns["builder"]
    rewrite(dsn, kind, DAMAGE[damage])
    validated, lean_read = paired_reads(store, kind, turn_key)
    expected = outcome(validated)
    assert outcome(lean_read) == expected
    if damage == "as-is":
        assert expected[0] == "ok"
    elif damage in ("newer-schema", "no-schema", "not-an-object", "a-string", "unknown-field"):
        assert expected[0] != "ok"


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


@st.composite
def mutated(draw: st.DrawFn, doc: Any) -> Any:
    """`doc` with one generated change: a field set to any JSON, a field dropped, or any JSON instead."""
    if not isinstance(doc, dict) or draw(st.integers(0, 9)) == 0:
        return draw(JSON)
    key = draw(st.sampled_from(sorted(doc)) | st.text(max_size=6))
    if key in doc and draw(st.booleans()):
        return {k: v for k, v in doc.items() if k != key}
    return {**doc, key: draw(JSON)}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(sorted(ROWS)), data=st.data())
def test_generated_rows_read_alike_through_both_transports(
    team: tuple[Path, str, PostgresStore], kind: str, data: st.DataObject
) -> None:
    _, dsn, store = team
    turn_key = store.read_goal("g").open_turns["builder"]
    done = rewrite(dsn, kind, lambda doc: data.draw(mutated(doc)))
    try:
        validated, lean_read = paired_reads(store, kind, turn_key)
        assert outcome(lean_read) == outcome(validated)
        assert store.lean_link.enabled  # the lean rows came through libpq, not psycopg
    finally:
        restore = {new: old for new, old in done}
        rewrite(dsn, kind, lambda doc: json.loads(restore[json.dumps(doc)]))
