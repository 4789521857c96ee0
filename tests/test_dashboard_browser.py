"""The dashboard in a real browser: Debian's Chromium driven by Playwright, against `loopx dashboard`.

Each test serves a fleet (five goals, three agents, turns, a gate, an ask) with the real
command in a subprocess and reads it as an owner would: the attention queue in `loopx
status`'s order, a goal, a gate resolved in one page while a second open page updates
live (server-sent events, no reload), a todo titled `<script>alert(1)</script>` shown as
text, a request without the token refused, a static path with `..` refused. No page may
request anything but the dashboard itself. Screenshots go to the test's tmp folder, or to
`LOOPX_SCREENSHOTS` (docs/screenshots is where the committed ones came from).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from loopx_core.store.files import FileStore
from tests.browser import (
    T0_ISO,
    XSS,
    Served,
    context,
    fleet,
    launched,
    request,
    screenshot,
    served_cli,
)
from tests.conftest import run_loopx

LIVE_TIMEOUT_MS = 15_000


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One Chromium for the module."""
    with launched() as b:
        yield b


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A project holding the fleet."""
    folder = tmp_path / "fleet"
    folder.mkdir()
    fleet(FileStore(folder))
    return folder


@pytest.fixture
def site(root: Path) -> Iterator[Served]:
    """`loopx dashboard` serving the fleet at T0."""
    with served_cli(root, env={"LOOPX_NOW": T0_ISO}) as served:
        yield served


def signed_in(browser: Any, site: Served, path: str = "/") -> tuple[Any, Any, Any]:
    """A new context signed in through the printed URL, on `path`; (context, page, local guard)."""
    ctx, guard = context(browser, site.base)
    page = ctx.new_page()
    page.goto(site.url)
    if path != "/":
        page.goto(site.base + path)
    return ctx, page, guard


def test_the_attention_queue_is_in_the_clis_order(
    browser: Any, site: Served, root: Path, tmp_path: Path
) -> None:
    ctx, page, guard = signed_in(browser, site)
    assert page.url == site.base + "/", "the token left the address bar after sign-in"
    shown = page.locator("tr.goal-row").evaluate_all("rows => rows.map(r => r.dataset.goal)")
    status = run_loopx("status", "--format", "json", root=root, now=T0_ISO)
    assert shown == [g["goal_id"] for g in json.loads(status.stdout)["goals"]]
    assert shown[0] == "release"  # blocked_health first
    assert "Approve the public API" in page.locator("#gates").inner_text()
    assert "nightly" in page.locator("#stalled").inner_text()
    assert "gpu" in page.locator("#asks").inner_text()
    assert page.locator("#live-status").inner_text() == "live"
    screenshot(page, tmp_path, "attention")
    assert guard.refused == []
    ctx.close()


def test_a_goal_page_shows_quota_board_turns_and_runs(browser: Any, site: Served, tmp_path: Path) -> None:
    ctx, page, guard = signed_in(browser, site)
    page.click("a[href='/goals/parser'] >> nth=0")
    page.wait_for_url(site.base + "/goals/parser")
    assert page.locator("svg.chart rect.bar").count() == 24  # one bar per hour of the 24 h window
    assert "26 of 72 slots" in page.locator("#quota").inner_text()
    for column, todo in (("open", "t9"), ("claimed", "t6"), ("done", "t1"), ("blocked", "t8")):
        assert page.locator(f".col-{column} [data-todo={todo}]").count() == 1, column
    assert "lease until" in page.locator(".col-claimed [data-todo=t6]").inner_text()
    turns = page.locator("#turns").inner_text()
    assert "committed" in turns and "open" in turns
    runs = page.locator("#runs").inner_text()
    assert "Pratt parser for expressions" in runs and "parser/expr.py" in runs
    screenshot(page, tmp_path, "goal")
    assert guard.refused == []
    ctx.close()


def test_a_todo_titled_script_is_text(browser: Any, site: Served) -> None:
    ctx, page, _ = signed_in(browser, site, "/goals/parser")
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.reload()
    assert page.locator("[data-todo=t9] .title").inner_text() == XSS
    assert page.locator("main script").count() == 0
    assert dialogs == []
    ctx.close()


def test_resolving_a_gate_updates_a_second_open_page_live(
    browser: Any, site: Served, root: Path, tmp_path: Path
) -> None:
    ctx_a, page_a, guard_a = signed_in(browser, site, "/goals/parser")
    ctx_b, page_b, guard_b = signed_in(browser, site, "/")
    page_b.wait_for_function("() => document.getElementById('live-status').textContent === 'live'")
    page_b.evaluate("window.notReloaded = true")
    assert page_b.locator("tr[data-goal=parser] .badge").inner_text() == "operator gate"

    page_a.fill("input[name=resolution]", "API approved as drafted")
    page_a.click("text=Resolve gate")
    page_a.wait_for_url(site.base + "/goals/parser*")
    assert "Resolved gate api-review" in page_a.locator(".flash").inner_text()
    assert page_a.locator("#gates").count() == 0

    page_b.wait_for_function(
        "() => document.querySelector('tr[data-goal=parser] .badge').textContent === 'eligible'",
        timeout=LIVE_TIMEOUT_MS,
    )
    assert page_b.locator("#gates").count() == 0
    assert page_b.evaluate("window.notReloaded") is True, "the page was reloaded, not updated in place"
    screenshot(page_b, tmp_path, "attention-after-resolve")
    shown = run_loopx("goal", "show", "--goal-id", "parser", "--format", "json", root=root, now=T0_ISO)
    gate = json.loads(shown.stdout)["state"]["gates"][0]
    assert (gate["status"], gate["resolution"]) == ("resolved", "API approved as drafted")
    assert guard_a.refused == guard_b.refused == []
    ctx_a.close()
    ctx_b.close()


def test_agents_and_hosts(browser: Any, site: Served, tmp_path: Path) -> None:
    ctx, page, guard = signed_in(browser, site, "/agents")
    nightly = page.locator("tr[data-agent=nightly]").inner_text()
    assert "stalled" in nightly and "dsh" in nightly
    reviewer = page.locator("tr[data-agent=reviewer]").inner_text()
    assert "parser" in reviewer and "open" in reviewer  # its current turn
    screenshot(page, tmp_path, "agents")
    assert guard.refused == []
    ctx.close()


def test_a_request_without_the_token_is_refused(browser: Any, site: Served) -> None:
    ctx, _ = context(browser, site.base)
    page = ctx.new_page()
    for path in ("/", "/goals/parser", "/agents", "/events", "/static/dashboard.js"):
        response = page.goto(site.base + path)
        assert response is not None and response.status == 403, path
    assert "no token" in page.locator("main").inner_text()
    response = page.goto(site.base + "/?token=not-the-token")
    assert response is not None and response.status == 403
    ctx.close()


def test_a_static_path_with_dotdot_is_refused(browser: Any, site: Served) -> None:
    for path in (
        "/static/../app.py",
        "/static/%2e%2e/app.py",
        "/static/..%2fapp.py",
        "/static/%2E%2E%2Fviews.py",
    ):
        reply = request(site, "GET", path)
        assert reply.status == 400, path
        assert "bad static path" in reply.body and "import" not in reply.body
    ctx, page, _ = signed_in(browser, site)
    response = page.goto(site.base + "/static/%2e%2e%2fapp.py")
    assert response is not None and response.status == 400
    ctx.close()


def test_a_goal_removed_while_its_page_is_open_shows_why_in_place(
    browser: Any, site: Served, root: Path, tmp_path: Path
) -> None:
    import shutil

    ctx, page, guard = signed_in(browser, site, "/goals/search")
    page.wait_for_function("() => document.getElementById('live-status').textContent === 'live'")
    page.evaluate("window.notReloaded = true")

    def forget(registry: Any) -> None:
        del registry.goals["search"]

    FileStore(root).update_registry(forget)  # removed by hand: no command deletes a goal
    shutil.rmtree(root / ".loopx" / "goals" / "search")
    page.wait_for_function(
        "() => document.body.dataset.status === '404'",
        timeout=LIVE_TIMEOUT_MS,
    )
    assert "not found" in page.locator(".error .message").inner_text()
    assert page.locator("#live-status").inner_text() == "live: 404"
    assert page.evaluate("window.notReloaded") is True
    screenshot(page, tmp_path, "goal-removed")
    assert guard.refused == []
    ctx.close()
