"""The dashboard over plain HTTP, on both stores: pages, owner actions, live events, errors.

The app is served by uvicorn in a thread (a real socket, the real middleware), on the file
store and on a real PostgreSQL server. Each owner action must leave the state exactly as
its CLI twin leaves a twin project: the dashboard has no write path of its own.
"""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from loopx_core.dashboard.security import Guard
from loopx_core.store.base import Store
from loopx_core.store.choice import open_target, record
from loopx_core.store.files import FileStore
from tests.browser import T0_ISO, XSS, Served, fleet, post_form, request, served_thread
from tests.conftest import Cli
from tests.pg import Cluster, cluster_fixture  # noqa: F401  (the session fixture pg_cluster)


@pytest.fixture(autouse=True)
def frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every page is read at T0 (the served app reads the clock per request)."""
    monkeypatch.setenv("LOOPX_NOW", T0_ISO)


def files_store(tmp_path: Path) -> Store:
    root = tmp_path / "fleet"
    root.mkdir(parents=True)
    store = FileStore(root)
    fleet(store)
    return store


@pytest.fixture(params=["files", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """The fleet on the file store, or on a PostgreSQL schema of its own."""
    if request.param == "files":
        yield files_store(tmp_path)
        return
    cluster: Cluster = request.getfixturevalue("pg_cluster")
    dsn = cluster.fresh_schema()
    root = tmp_path / "fleet"
    (root / ".loopx").mkdir(parents=True)
    record(root, dsn)
    pg = open_target(root, dsn, shared=False)
    fleet(pg)
    yield pg
    pg.close()  # type: ignore[attr-defined]


@pytest.fixture
def site(store: Store) -> Iterator[Served]:
    with served_thread(store) as served:
        yield served


@pytest.fixture
def files_site(tmp_path: Path) -> Iterator[Served]:
    with served_thread(files_store(tmp_path)) as served:
        yield served


def goal_state(store: Store, goal_id: str = "parser") -> dict[str, Any]:
    return store.read_goal(goal_id).dump()


# -- pages, on both stores ------------------------------------------------------------------------


def test_the_attention_page_on_either_store(site: Served, store: Store) -> None:
    reply = request(site, "GET", "/")
    assert reply.status == 200
    order = [
        line.split('data-goal="')[1].split('"')[0] for line in reply.body.splitlines() if "goal-row" in line
    ]
    assert order == ["release", "parser", "search", "docs", "infra"]
    assert store.label in reply.body
    assert "api-review" in reply.body and "nightly" in reply.body


def test_resolving_a_gate_on_either_store(site: Served, store: Store) -> None:
    reply = post_form(site, "/goals/parser/resolve-gate", {"gate_id": "api-review", "resolution": "ok"})
    assert reply.status == 303 and reply.headers["location"].startswith("/goals/parser?done=")
    gate = store.read_goal("parser").gate("api-review")
    assert gate is not None and (gate.status, gate.resolution) == ("resolved", "ok")
    page = request(site, "GET", reply.headers["location"])
    assert "Resolved gate api-review" in page.body and 'data-gate="api-review"' not in page.body


def test_a_goal_page_on_either_store(site: Served) -> None:
    reply = request(site, "GET", "/goals/parser")
    assert reply.status == 200
    assert "26 of 72 slots" in reply.body and reply.body.count('class="bar"') == 24
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in reply.body and XSS not in reply.body


def test_agents_page(files_site: Served) -> None:
    reply = request(files_site, "GET", "/agents")
    assert reply.status == 200
    assert "No facade installed" in reply.body  # none in this project
    assert reply.body.count("data-agent=") == 3


# -- owner actions: exactly what the CLI does ----------------------------------------------------

ACTIONS: list[tuple[str, dict[str, str], list[str]]] = [
    (
        "resolve-gate",
        {"gate_id": "api-review", "resolution": "go"},
        ["gate", "resolve", "-g", "parser", "--gate-id", "api-review", "--resolution", "go"],
    ),
    ("pause", {}, ["goal", "stop", "-g", "parser"]),
    ("clear-finding", {"code": "slow-ci"}, ["health", "clear", "-g", "parser", "--code", "slow-ci"]),
    (
        "add-todo",
        {"title": "Write docs", "priority": "4", "capabilities": "python, docs"},
        ["todo", "add", "-g", "parser", "--title", "Write docs", "-p", "4", "-c", "python", "-c", "docs"],
    ),
    (
        "grant",
        {"agent_id": "builder", "capability": "gpu"},
        ["agent", "register", "-a", "builder", "-c", "python", "-c", "gpu"],
    ),
    (
        "rescope",
        {"todo_id": "t10", "capabilities": "python"},
        ["todo", "update", "-g", "parser", "-t", "t10", "-c", "python"],
    ),
]


def comparable(store: Store) -> dict[str, Any]:
    """What an action may change: the registry and the goal's todos, gates and findings."""
    state = goal_state(store)
    registry = store.read_registry().dump()
    return {"registry": registry, **{k: state[k] for k in ("todos", "gates", "health", "next_todo_number")}}


@pytest.mark.parametrize(("action", "fields", "argv"), ACTIONS, ids=[a[0] for a in ACTIONS])
def test_each_action_leaves_the_state_its_cli_twin_leaves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, action: str, fields: dict[str, str], argv: list[str]
) -> None:
    web = files_store(tmp_path / "web")
    twin = files_store(tmp_path / "cli")
    before = comparable(web)
    with served_thread(web) as site:
        reply = post_form(site, f"/goals/parser/{action}", fields)
    assert reply.status == 303, reply.body
    result = Cli(twin.root, monkeypatch)(*argv)
    assert result.exit_code == 0, result.stderr
    assert comparable(web) == comparable(twin) != before


def test_resume_after_pause(files_site: Served) -> None:
    assert post_form(files_site, "/goals/parser/pause", {}).status == 303
    assert 'action="/goals/parser/resume"' in request(files_site, "GET", "/goals/parser").body
    assert post_form(files_site, "/goals/parser/resume", {}).status == 303
    assert 'action="/goals/parser/pause"' in request(files_site, "GET", "/goals/parser").body


# -- the guard -------------------------------------------------------------------------------------


def test_signing_in_sets_a_strict_cookie_and_drops_the_token(files_site: Served) -> None:
    reply = request(files_site, "GET", f"/goals/parser?token={files_site.token}&x=1", signed_in=False)
    assert reply.status == 303 and reply.headers["location"] == "/goals/parser?x=1"
    cookie = reply.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert "script-src 'self'" in reply.headers["content-security-policy"]


@pytest.mark.parametrize(
    "headers",
    [{}, {"Cookie": "loopx_dashboard_x=wrong"}, {"Cookie": "garbage;;;=\x7f"}],
    ids=["no-cookie", "wrong-cookie", "malformed-cookie"],
)
def test_every_path_needs_the_token(files_site: Served, headers: dict[str, str]) -> None:
    for method, path in (
        ("GET", "/"),
        ("GET", "/goals/parser"),
        ("GET", "/events"),
        ("GET", "/static/dashboard.js"),
        ("POST", "/goals/parser/pause"),
    ):
        reply = request(files_site, method, path, headers=headers, signed_in=False)
        assert reply.status == 403, path
    assert request(files_site, "GET", "/?token=wrong", signed_in=False).status == 403


def test_a_rebinding_host_is_refused(files_site: Served) -> None:
    assert request(files_site, "GET", "/", headers={"Host": "evil.example:80"}).status == 403


@pytest.mark.parametrize(
    ("origin", "csrf", "status"),
    [(None, True, 403), ("http://evil.example", True, 403), ("same", False, 403), ("null", True, 403)],
    ids=["no-origin", "foreign-origin", "no-csrf", "null-origin"],
)
def test_a_cross_site_post_changes_nothing(
    files_site: Served, origin: str | None, csrf: bool, status: int, tmp_path: Path
) -> None:
    from urllib.parse import urlencode

    data = {"gate_id": "api-review"}
    if csrf:
        data["csrf"] = Guard(files_site.token, loopback_only=True).csrf
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    if origin is not None:
        headers["Origin"] = files_site.base if origin == "same" else origin
    reply = request(files_site, "POST", "/goals/parser/resolve-gate", body=urlencode(data), headers=headers)
    assert reply.status == status
    page = request(files_site, "GET", "/goals/parser")
    assert 'data-gate="api-review"' in page.body, "the gate was resolved by a refused POST"


def test_a_referer_of_this_server_is_enough_without_origin(files_site: Served) -> None:
    from urllib.parse import urlencode

    body = urlencode({"csrf": Guard(files_site.token, loopback_only=True).csrf})
    reply = request(
        files_site,
        "POST",
        "/goals/parser/pause",
        body=body,
        headers={
            "Content-Type": "application/x-www-form-urlencoded",
            "Referer": files_site.base + "/goals/parser",
        },
    )
    assert reply.status == 303


# -- errors: a page, never a traceback -------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/goals/nope", 404),
        ("GET", "/goals/..%2f..%2fetc", 404),
        ("GET", "/goals/UPPER", 404),
        ("GET", "/nowhere", 404),
        ("PUT", "/", 405),
        ("GET", "/static/nope.js", 404),
        ("GET", "/static/", 404),
    ],
)
def test_bad_paths_are_error_pages(files_site: Served, method: str, path: str, status: int) -> None:
    reply = request(files_site, method, path)
    assert reply.status == status
    assert "<h1>" in reply.body and "Traceback" not in reply.body


@pytest.mark.parametrize(
    ("action", "fields", "status", "says"),
    [
        ("add-todo", {}, 400, "missing field &#39;title&#39;"),
        ("add-todo", {"title": "x", "priority": "high"}, 400, "priority must be a whole number"),
        ("add-todo", {"title": "x", "priority": "12"}, 400, "priority"),
        ("add-todo", {"title": "x", "kind": "robot"}, 400, "kind must be agent or user"),
        ("add-todo", {"title": "x" * 3000}, 400, "longer than"),
        ("resolve-gate", {"gate_id": "nope"}, 404, "gate &#39;nope&#39; not found"),
        ("resolve-gate", {"gate_id": "../x"}, 400, "gate"),
        ("clear-finding", {"code": "nope"}, 404, "no health finding"),
        ("grant", {"agent_id": "ghost", "capability": "gpu"}, 404, "not registered"),
        ("rescope", {"todo_id": "t1", "capabilities": "x"}, 409, "is done"),
        ("explode", {}, 404, "no such action"),
    ],
)
def test_bad_forms_are_answered_with_their_message(
    files_site: Served, action: str, fields: dict[str, str], status: int, says: str
) -> None:
    reply = post_form(files_site, f"/goals/parser/{action}", fields)
    assert reply.status == status
    assert says in reply.body


def test_an_action_on_a_missing_goal_is_404(files_site: Served) -> None:
    assert post_form(files_site, "/goals/ghost/pause", {}).status == 404


def test_a_form_that_is_not_a_form_is_400(files_site: Served) -> None:
    reply = request(
        files_site,
        "POST",
        "/goals/parser/pause",
        body=json.dumps({"csrf": "x"}),
        headers={"Content-Type": "application/json", "Origin": files_site.base},
    )
    assert reply.status == 400 and "posted as a form" in reply.body
    big = "a=" + "b" * 20_000
    reply = request(
        files_site,
        "POST",
        "/goals/parser/pause",
        body=big,
        headers={"Content-Type": "application/x-www-form-urlencoded", "Origin": files_site.base},
    )
    assert reply.status == 400 and "larger than" in reply.body


def test_a_damaged_goal_state_is_shown_not_raised(tmp_path: Path) -> None:
    store = files_store(tmp_path)
    assert isinstance(store, FileStore)
    store.goal_path("search").write_text("{ not json")
    with served_thread(store) as site:
        attention = request(site, "GET", "/")
        goal = request(site, "GET", "/goals/search")
    assert attention.status == 200 and "state unreadable" in attention.body
    assert goal.status == 200 and "State unreadable" in goal.body


# -- live events -------------------------------------------------------------------------------------


def read_events(served: Served, fp: str, until: str, timeout: float = 10) -> list[str]:
    """Open /events?fp=FP and collect event names until `until` arrives."""
    parts = urlsplit(served.base)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=timeout)
    guard = Guard(served.token, loopback_only=True)
    conn.request(
        "GET",
        f"/events?fp={fp}",
        headers={"Host": parts.netloc, "Cookie": f"{guard.cookie_name}={served.token}"},
    )
    reply = conn.getresponse()
    assert reply.status == 200 and reply.getheader("content-type", "").startswith("text/event-stream")
    names: list[str] = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            line = reply.fp.readline().decode()
            if line.startswith("event: "):
                names.append(line[7:].strip())
                if names[-1] == until:
                    return names
                if names[-1] == "hello" and until == "change":
                    make_change(served)
    finally:
        conn.close()
    return names


def make_change(served: Served) -> None:
    """Make a change through an owner action (the watcher must see it)."""
    post_form(served, "/goals/search/add-todo", {"title": "Live change"})


def test_a_store_change_is_an_event(site: Served) -> None:
    page = request(site, "GET", "/")
    fp = page.body.split('data-fingerprint="')[1].split('"')[0]
    assert read_events(site, fp, "change") == ["hello", "change"]


def test_a_change_before_the_stream_opened_is_not_missed(files_site: Served) -> None:
    page = request(files_site, "GET", "/")
    fp = page.body.split('data-fingerprint="')[1].split('"')[0]
    assert post_form(files_site, "/goals/parser/pause", {}).status == 303
    parts = urlsplit(files_site.base)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
    guard = Guard(files_site.token, loopback_only=True)
    conn.request(
        "GET",
        f"/events?fp={fp}",
        headers={"Host": parts.netloc, "Cookie": f"{guard.cookie_name}={files_site.token}"},
    )
    reply = conn.getresponse()
    lines: list[str] = []
    while "event: change" not in lines:
        lines.append(reply.fp.readline().decode().strip())  # times out (fails) if it never comes
    conn.close()
    assert lines.index("event: hello") < lines.index("event: change")
