"""`/metrics` over real HTTP, on both stores: Prometheus' own parser reads it, and its numbers
are the ones `loopx status` and `loopx health` show. Only a bearer of a token (or a signed-in
browser) reads it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from loopx_core.clock import parse_time
from loopx_core.ops.health import liveness
from loopx_core.status import attention
from loopx_core.store.base import Store
from loopx_core.store.choice import open_target, record
from loopx_core.store.files import FileStore
from tests.browser import T0_ISO, Served, fleet, request, served_cli, served_thread
from tests.conftest import run_loopx
from tests.pg import Cluster, cluster_fixture  # noqa: F401  (the session fixture pg_cluster)

TOKEN = "t" * 24


@pytest.fixture(autouse=True)
def frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every scrape reads at T0."""
    monkeypatch.setenv("LOOPX_NOW", T0_ISO)


@pytest.fixture(params=["files", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """The fleet (five goals in five states, three agents) on either store."""
    root = tmp_path / "fleet"
    if request.param == "files":
        root.mkdir(parents=True)
        files = FileStore(root)
        fleet(files)
        yield files
        return
    cluster: Cluster = request.getfixturevalue("pg_cluster")
    dsn = cluster.fresh_schema()
    (root / ".loopx").mkdir(parents=True)
    record(root, dsn)
    pg = open_target(root, dsn, shared=False)
    fleet(pg)
    yield pg
    pg.close()  # type: ignore[attr-defined]


def _scrape(served: Served, token: str = TOKEN) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    reply = request(served, "GET", "/metrics", headers={"Authorization": f"Bearer {token}"}, signed_in=False)
    assert reply.status == 200, reply.body
    assert reply.headers["content-type"].startswith("text/plain; version=")
    out: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(reply.body):
        for sample in family.samples:
            out.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return out


def _one(series: dict[tuple[tuple[str, str], ...], float], **labels: str) -> float:
    return series[tuple(sorted(labels.items()))]


def test_metrics_agree_with_status_and_health(store: Store) -> None:
    now = parse_time(T0_ISO)
    rows = attention(store, now)
    agents = liveness(store, now)
    with served_thread(store, TOKEN) as served:
        seen = _scrape(served)
    states = seen["loopx_goal_state"]
    assert {dict(k)["goal_id"] for k in states} == {r["goal_id"] for r in rows}
    for row in rows:
        goal = row["goal_id"]
        on = [dict(k)["state"] for k, v in states.items() if dict(k)["goal_id"] == goal and v == 1.0]
        assert on == [row["state"]], goal
        if row["spent_slots"] is not None:
            assert _one(seen["loopx_goal_slots_spent"], goal_id=goal) == row["spent_slots"]
        assert _one(seen["loopx_goal_slots_allowed"], goal_id=goal) == row["allowed_slots"]
        if row["state"] != "blocked_health":
            assert _one(seen["loopx_goal_todos_open"], goal_id=goal) == row["todos_open"]
            history = store.read_history(goal)
            for verdict in ("passed", "failed"):
                expected = sum(1 for r in history if r.validation == verdict)
                assert (
                    _one(seen["loopx_goal_turns_settled_total"], goal_id=goal, validation=verdict) == expected
                )
            opened = sum(1 for g in store.read_goal(goal).gates if g.status == "open")
            assert _one(seen["loopx_goal_gates_open"], goal_id=goal) == opened
    assert sum(seen["loopx_goal_gates_open"].values()) >= 1  # the fleet has an open gate: the check bites
    assert sum(seen["loopx_goal_turns_settled_total"].values()) >= 1
    for agent in agents:
        assert _one(seen["loopx_agent_status"], agent_id=agent.agent_id, status=agent.status) == 1.0
        assert _one(seen["loopx_agent_silent_seconds"], agent_id=agent.agent_id) == pytest.approx(
            agent.silent_minutes * 60  # type: ignore[operator]
        )
    assert any(a.status == "stalled" for a in agents)


def test_metrics_need_a_token(tmp_path: Path) -> None:
    files = FileStore(tmp_path)
    fleet(files)
    with served_thread(files, TOKEN) as served:
        for headers in (
            {},
            {"Authorization": "Bearer wrong-token-wrong-token"},
            {"Authorization": "Basic x"},
        ):
            reply = request(served, "GET", "/metrics", headers=headers, signed_in=False)
            assert reply.status == 401 and "Bearer" in reply.headers["www-authenticate"], headers
            assert "loopx_goal" not in reply.body
        assert request(served, "GET", "/metrics").status == 200  # a signed-in browser
        assert request(served, "POST", "/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).status in (
            404,
            405,
        )


def test_a_metrics_token_reads_metrics_alone(tmp_path: Path) -> None:
    """`loopx dashboard --metrics-token` (the real command): the scraper's token reads /metrics
    and opens no page; a bad one is refused before anything listens."""
    files = FileStore(tmp_path)
    fleet(files)
    scraper = "s" * 20
    with served_cli(tmp_path, "--metrics-token", scraper, env={"LOOPX_NOW": T0_ISO}) as served:
        assert "loopx_goal_state" in str(_scrape(served, scraper))
        page = request(served, "GET", f"/?token={scraper}", signed_in=False)
        assert page.status == 403
    bad = run_loopx("dashboard", "--port", "0", "--metrics-token", "short", root=tmp_path)
    assert bad.exit_code == 2 and "--metrics-token must be at least" in bad.stderr


def test_a_goal_blocked_by_a_finding_keeps_its_counts(tmp_path: Path) -> None:
    """A high health finding blocks the goal, but its state is readable: its counts stay."""
    from loopx_core.ops import health

    files = FileStore(tmp_path)
    fleet(files)
    now = parse_time(T0_ISO)
    goal = next(
        r["goal_id"] for r in attention(files, now) if r["state"] not in ("blocked_health", "paused", "done")
    )
    health.add_finding(files, goal, "disk_full", "high", "disk full")
    row = next(r for r in attention(files, now) if r["goal_id"] == goal)
    assert row["state"] == "blocked_health"
    with served_thread(files, TOKEN) as served:
        seen = _scrape(served)
    assert _one(seen["loopx_goal_todos_open"], goal_id=goal) == row["todos_open"]
    assert ("goal_id", goal) in {pair for key in seen["loopx_goal_gates_open"] for pair in key}


def test_a_metrics_token_equal_to_the_token_is_refused(tmp_path: Path) -> None:
    files = FileStore(tmp_path)
    fleet(files)
    same = "s" * 20
    done = run_loopx("dashboard", "--port", "0", "--token", same, "--metrics-token", same, root=tmp_path)
    assert done.exit_code == 2 and "--metrics-token must differ" in done.stderr


def test_turns_by_status_and_refusal(tmp_path: Path) -> None:
    """One turn committed, one cancelled, one refused by its validation: three series."""
    from tests.builders import build_project, run_once_words

    store_ = build_project(tmp_path / "p", todo_count=3)
    root = tmp_path / "p"

    def loopx(*args: str) -> None:
        run_loopx(*args, "-f", "json", root=root)

    loopx(
        *run_once_words(),
    )
    key = json.loads(
        run_loopx("turn", "begin", "-g", "g", "-a", "other", "-t", "t2", "-f", "json", root=root).stdout
    )["turn_key"]
    loopx("turn", "cancel", "-g", "g", "-a", "other", "--turn-key", key)
    loopx(
        *run_once_words("true", "false"),
    )
    with served_thread(store_, TOKEN) as served:
        seen = _scrape(served)
    turns = {tuple(v for k, v in key if k != "goal_id"): n for key, n in seen["loopx_goal_turns"].items()}
    assert turns == {
        ("", "committed"): 1.0,
        ("cancelled", "stopped"): 1.0,
        ("writeback_rejected", "failed"): 1.0,
    }
