"""Class: damaged rows in a PostgreSQL store make a dashboard page or action crash or disagree.

The same rule as on files (test_dashboard_damaged_state.py), on a real PostgreSQL server:
for a damaged registry, goal, ledger event, run index row or journal (garbage shape, newer
schema), every page is a page (never a 500, a traceback or an absolute path) and an owner
action answers the status its CLI twin's exit code maps to, writing nothing when refused. A
request that is not signed in learns nothing of the store (not its DSN).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import psycopg
import pytest

from loopx_core.dashboard.app import HTTP_STATUS, create_app
from loopx_core.dashboard.security import Guard
from loopx_core.store.base import Store
from loopx_core.store.choice import open_target, record
from tests.browser import T0_ISO, asgi, fleet, signed_in
from tests.conftest import Cli
from tests.pg import Cluster, cluster_fixture  # noqa: F401  (the session fixture pg_cluster)

TOKEN = "p" * 24
DAMAGES = {
    "registry garbage": "UPDATE loopx_registry SET doc = '[1, 2]'",
    "registry newer": "UPDATE loopx_registry SET doc = json_build_object('schema_version', 99)",
    "goal garbage": "UPDATE loopx_goals SET doc = '\"x\"' WHERE goal_id = 'parser'",
    "goal newer": "UPDATE loopx_goals SET doc = json_build_object('schema_version', 99, 'goal_id', 'parser') "
    "WHERE goal_id = 'parser'",
    "journal garbage": "UPDATE loopx_journals SET doc = '{}'",
    "scheduler garbage": "UPDATE loopx_scheduler SET doc = '[]'",
}

ACTIONS = {
    "pause": ({}, ["goal", "stop", "-g", "parser"]),
    "add-todo": (
        {"title": "After the damage"},
        ["todo", "add", "-g", "parser", "--title", "After the damage"],
    ),
    "grant": (
        {"agent_id": "builder", "capability": "gpu"},
        ["agent", "register", "-a", "builder", "-c", "python", "-c", "gpu"],
    ),
}


def pg_project(cluster: Cluster, root: Path) -> tuple[Store, str]:
    dsn = cluster.fresh_schema()
    (root / ".loopx").mkdir(parents=True)
    record(root, dsn)
    store = open_target(root, dsn, shared=True)
    fleet(store)
    return store, dsn


def damage(dsn: str, statement: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        for table in ("loopx_events", "loopx_run_index"):  # append-only by trigger
            conn.execute(f"ALTER TABLE {table} DISABLE TRIGGER USER")
        conn.execute(statement)  # type: ignore[arg-type]


@pytest.fixture
def pair(
    pg_cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Store, str, Path, str]]:
    monkeypatch.setenv("LOOPX_NOW", T0_ISO)
    web, web_dsn = pg_project(pg_cluster, tmp_path / "web")
    twin, twin_dsn = pg_project(pg_cluster, tmp_path / "cli")
    twin.close()  # type: ignore[attr-defined]
    yield web, web_dsn, tmp_path / "cli", twin_dsn
    web.close()  # type: ignore[attr-defined]


def dump(dsn: str) -> list[object]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        tables = ("loopx_registry", "loopx_goals", "loopx_events", "loopx_run_index", "loopx_scheduler")
        return [
            conn.execute(f"SELECT md5(string_agg(t::text, '' ORDER BY t::text)) FROM {name} t").fetchone()
            for name in tables
        ]


@pytest.mark.parametrize("action", sorted(ACTIONS))
@pytest.mark.parametrize("name", [*DAMAGES, "events body", "run index body"])
def test_pages_and_an_action_on_a_damaged_row(
    pair: tuple[Store, str, Path, str], monkeypatch: pytest.MonkeyPatch, name: str, action: str
) -> None:
    web, web_dsn, twin_root, twin_dsn = pair
    statement = DAMAGES.get(name) or (
        "UPDATE loopx_events SET body = '{}'"
        if name == "events body"
        else "UPDATE loopx_run_index SET entry = '[]'"
    )
    for dsn in (web_dsn, twin_dsn):
        damage(dsn, statement)
    app = create_app(web, Guard(TOKEN, loopback_only=True))
    for page in ("/", "/goals/parser", "/agents", "/goals/docs"):
        reply = asgi(app, "GET", page, headers=signed_in(TOKEN))
        assert reply.status in (200, 404, 409, 503), (page, reply.status, reply.body[-300:])
        assert "Traceback" not in reply.body and "internal error" not in reply.body, reply.body[-300:]
        assert "/tmp/" not in reply.body, reply.body[-300:]
    fields, argv = ACTIONS[action]
    before = dump(web_dsn)
    reply = asgi(
        app,
        "POST",
        f"/goals/parser/{action}",
        headers={
            **signed_in(TOKEN),
            "Origin": "http://127.0.0.1:8765",
            "Content-Type": "application/x-www-form-urlencoded",
        },
        body=urlencode({"csrf": Guard(TOKEN, loopback_only=True).csrf, **fields}).encode(),
    )
    result = Cli(twin_root, monkeypatch)(*argv)
    expected = 303 if result.exit_code == 0 else HTTP_STATUS.get(result.exit_code, 500)
    assert reply.status == expected, (reply.status, result.exit_code, result.stderr, reply.body[-300:])
    if reply.status != 303:
        assert dump(web_dsn) == before


def test_a_refusal_does_not_show_the_dsn(pair: tuple[Store, str, Path, str]) -> None:
    web, *_ = pair
    app = create_app(web, Guard(TOKEN, loopback_only=True))
    for path in ("/", "/goals/parser", "/?token=" + "w" * 24):
        reply = asgi(app, "GET", path)
        assert reply.status == 403 and web.label not in reply.body and "postgresql" not in reply.body
