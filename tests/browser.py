"""Helpers for the dashboard's tests: a served dashboard, plain HTTP, and Debian's Chromium.

Chromium is the system's (`/usr/bin/chromium`, Debian's `chromium` package; `make test`
installs it with scripts/chromium.sh), launched by Playwright by executable path: no
`playwright install`, no browser download. Its networking is kept local: every request that
is not for the dashboard on 127.0.0.1 is aborted and recorded, so a page that tried to fetch
anything from elsewhere fails its test. A missing Chromium is a failure, never a skip.
"""

from __future__ import annotations

import http.client
import os
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from loopx_core.store.base import Store

CHROMIUM_ENV = "LOOPX_CHROMIUM"
SCREENSHOTS_ENV = "LOOPX_SCREENSHOTS"
LOOPX = Path(sys.executable).parent / "loopx"
CHROMIUM_ARGS = [
    "--no-sandbox",  # the tests run as root on CI
    "--disable-dev-shm-usage",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]


def chromium() -> str:
    """The system Chromium's path (`LOOPX_CHROMIUM` overrides); missing fails the test."""
    named = os.environ.get(CHROMIUM_ENV)
    for candidate in (named, "/usr/bin/chromium", shutil.which("chromium")):
        if candidate and Path(candidate).is_file():
            return candidate
    pytest.fail("Chromium is missing: run `bash scripts/chromium.sh` (make test does)")


@contextmanager
def launched() -> Iterator[Any]:
    """A headless Chromium browser driven by Playwright."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium(), headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@dataclass
class LocalOnly:
    """Requests a page made that were not for the dashboard (each one aborted)."""

    base: str
    refused: list[str] = field(default_factory=list)

    def __call__(self, route: Any) -> None:
        """Playwright route handler: continue local requests, abort and record the rest."""
        url = route.request.url
        if url.startswith(self.base + "/") or url == self.base:
            route.continue_()
        else:
            self.refused.append(url)
            route.abort()


def context(browser: Any, base: str, *, width: int = 1360, height: int = 900) -> tuple[Any, LocalOnly]:
    """A fresh browser context whose requests may only reach `base`."""
    ctx = browser.new_context(viewport={"width": width, "height": height})
    guard = LocalOnly(base)
    ctx.route("**/*", guard)
    return ctx, guard


def screenshot(page: Any, tmp_path: Path, name: str) -> Path:
    """Save a full-page screenshot: into `LOOPX_SCREENSHOTS` when set, else the test's tmp folder."""
    folder = Path(os.environ.get(SCREENSHOTS_ENV) or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


# -- a served dashboard ---------------------------------------------------------------------------


@dataclass
class Served:
    """A running dashboard: its printed URL (with the token), base and token."""

    url: str
    process: subprocess.Popen[str] | None = None
    app: Any = None
    """The ASGI app, when served in this process (`served_thread`)."""

    @property
    def base(self) -> str:
        """`http://127.0.0.1:PORT`."""
        parts = urlsplit(self.url)
        return f"{parts.scheme}://{parts.netloc}"

    @property
    def token(self) -> str:
        """The launch token from the URL."""
        return self.url.split("token=", 1)[1]


@contextmanager
def served_cli(
    root: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 30
) -> Iterator[Served]:
    """`loopx --root ROOT dashboard --port 0 ARGS...` in a subprocess; Ctrl-C (SIGINT) at the end."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("LOOPX_")} | (env or {})
    proc = subprocess.Popen(
        [str(LOOPX), "--root", str(root), "dashboard", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=full,
    )
    try:
        line = _first_line(proc, timeout)
        yield Served(line.rsplit(" ", 1)[1], proc)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _first_line(proc: subprocess.Popen[str], timeout: float) -> str:
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 0.2)
        if ready:
            line = proc.stdout.readline()
            if line.startswith("LoopX dashboard"):
                return line.strip()
        if proc.poll() is not None:
            err = proc.stderr.read() if proc.stderr else ""
            pytest.fail(f"loopx dashboard exited {proc.returncode}: {err.strip()}")
    pytest.fail("loopx dashboard printed no URL in time")


@contextmanager
def served_thread(store: Store, token: str = "t" * 24, *, poll_seconds: float = 0.2) -> Iterator[Served]:
    """The dashboard app for `store` served by uvicorn in a thread of this process."""
    import uvicorn

    from loopx_core.dashboard.app import create_app
    from loopx_core.dashboard.security import Guard
    from loopx_core.dashboard.server import bind, url

    sock = bind("127.0.0.1", 0)
    app = create_app(store, Guard(token, loopback_only=True), poll_seconds=poll_seconds)
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on", timeout_graceful_shutdown=1)
    )
    app.dashboard.watcher.stop_when = lambda: server.should_exit  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield Served(url("127.0.0.1", sock, token), app=app)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


# -- plain HTTP ---------------------------------------------------------------------------------


@dataclass
class Reply:
    """One HTTP answer."""

    status: int
    headers: dict[str, str]
    body: str


def request(
    served: Served,
    method: str,
    path: str,
    *,
    body: str | bytes | None = None,
    headers: dict[str, str] | None = None,
    signed_in: bool = True,
    timeout: float = 30,
) -> Reply:
    """A raw HTTP request (the path sent exactly as given); `signed_in` sends the token's cookie."""
    from loopx_core.dashboard.security import Guard

    parts = urlsplit(served.base)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=timeout)
    sent = {"Host": parts.netloc, **(headers or {})}
    if signed_in:
        guard = Guard(served.token, loopback_only=True)
        sent.setdefault("Cookie", f"{guard.cookie_name}={served.token}")
    try:
        conn.request(method, path, body=body, headers=sent)
        reply = conn.getresponse()
        headers = {k.lower(): v for k, v in reply.getheaders()}
        if headers.get("content-type", "").startswith("text/event-stream"):
            return Reply(reply.status, headers, "")  # the live stream never ends: its head is the answer
        return Reply(reply.status, headers, reply.read().decode())
    finally:
        conn.close()


def post_form(
    served: Served, path: str, fields: dict[str, str], *, origin: bool = True, csrf: bool = True
) -> Reply:
    """POST a form as the dashboard's own page does (Origin of the server, the CSRF field)."""
    from urllib.parse import urlencode

    from loopx_core.dashboard.security import Guard

    data = dict(fields)
    if csrf:
        data.setdefault("csrf", Guard(served.token, loopback_only=True).csrf)
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    if origin:
        headers["Origin"] = served.base
    return request(served, "POST", path, body=urlencode(data), headers=headers)


# -- a fleet to look at ---------------------------------------------------------------------------

T0_ISO = "2026-11-29T12:00:00Z"
XSS = "<script>alert(1)</script>"


def fleet(store: Store) -> None:
    """Five goals in five states, three agents (one stalled), turns, runs, a gate, an ask, findings.

    Built through the real ops and settlement (as the CLI and hosts would), at times before
    `T0_ISO`; the pages are then read at `T0_ISO`.
    """
    from datetime import timedelta

    from loopx_core.kernel.algebra import StepKind
    from loopx_core.ops import gates, goals, health, todos
    from loopx_core.settlement.steps import TurnContext
    from loopx_core.settlement.turns import begin_turn, record_host_phases, settle_steps
    from tests.conftest import T0

    def at(hours: float) -> Any:
        return T0 - timedelta(hours=hours)

    store.init()
    goals.add_goal(store, "parser", "Ship a tested parser for the config language", at(30), compute=0.05)
    goals.add_goal(store, "docs", "Document every CLI command", at(30), compute=0.005)
    goals.add_goal(store, "infra", "Move CI to the new runners", at(30))
    goals.add_goal(store, "release", "Cut the 1.0 release", at(30))
    goals.add_goal(store, "search", "Full-text search over run history", at(30))
    goals.register_agent(store, "builder", ["python"], at(30), host="claude-code", cadence_minutes=15)
    goals.register_agent(
        store, "reviewer", ["python", "review"], at(30), host="codex-app", cadence_minutes=30
    )
    goals.register_agent(store, "nightly", ["python"], at(30), host="dsh", cadence_minutes=20)

    def settled(
        goal: str, agent: str, title: str, hours: float, slots: int, summary: str, files: list[str]
    ) -> None:
        todo = todos.add_todo(store, goal, title, at(hours + 0.5))
        journal, _ = begin_turn(store, goal, agent, at(hours), todo_id=todo.todo_id)
        ctx = TurnContext(
            store,
            goal,
            agent,
            journal.turn_key,
            lambda: at(hours),
            todo_id=todo.todo_id,
            summary=summary,
            evidence=[f"pytest tests/{files[0].rsplit('/', 1)[-1]}: passed"],
            validation_passed=True,
            changed_files=files,
            slots=slots,
        )
        record_host_phases(ctx, {"adapter": "test", "status": "succeeded"})  # as a host's writeback does
        settle_steps(
            ctx, [StepKind.VALIDATION, StepKind.DURABLE_WRITEBACK, StepKind.QUOTA_SPEND], adapter="test"
        )
        todos.complete_todo(store, goal, todo.todo_id, at(hours), agent_id=agent)

    settled(
        "parser",
        "builder",
        "Write the tokenizer",
        20,
        6,
        "Tokenizer with 40 token kinds",
        ["parser/lexer.py"],
    )
    settled(
        "parser",
        "reviewer",
        "Review the tokenizer",
        15,
        3,
        "Two fixes requested, both made",
        ["parser/lexer.py"],
    )
    settled(
        "parser", "builder", "Parse expressions", 9, 8, "Pratt parser for expressions", ["parser/expr.py"]
    )
    settled(
        "parser",
        "builder",
        "Error messages with positions",
        4,
        5,
        "Errors name line and column",
        ["parser/errors.py"],
    )
    settled(
        "parser",
        "reviewer",
        "Fuzz the parser",
        1.5,
        4,
        "Fuzzing found one crash; fixed",
        ["tests/fuzz_parser.py"],
    )
    todos.add_todo(store, "parser", "Parse nested blocks", at(2), priority=1)
    todos.claim_todo(store, "parser", "t6", "builder", at(0.2), lease_minutes=45)
    todos.add_todo(store, "parser", "Review the error messages", at(1))
    begin_turn(store, "parser", "reviewer", at(0.1), todo_id="t7")
    todos.add_todo(store, "parser", "Benchmark on large files", at(3), priority=3)
    todos.block_todo(store, "parser", "t8", "waiting for the corpus", at(2))
    todos.add_todo(store, "parser", XSS, at(1))
    todos.add_todo(store, "parser", "Profile on the GPU box", at(1), required_capabilities=["gpu"])
    todos.add_todo(store, "parser", "Decide the 1.0 syntax", at(1), kind="user", priority=0)
    todos.add_todo(store, "parser", "Nightly regression sweep", at(6))
    todos.claim_todo(store, "parser", "t12", "nightly", at(6), lease_minutes=600)
    gates.open_gate(
        store, "parser", "Approve the public API before the release", at(0.5), gate_id="api-review"
    )
    health.add_finding(store, "parser", "slow-ci", "medium", "CI takes 14 minutes per run")

    settled(
        "docs",
        "builder",
        "Reference for goal commands",
        3,
        4,
        "goal add/list/show documented",
        ["docs/cli.md"],
    )
    settled(
        "docs", "builder", "Reference for todo commands", 2, 3, "todo commands documented", ["docs/cli.md"]
    )
    todos.add_todo(store, "docs", "Reference for gate commands", at(1))
    goals.set_goal_status(store, "infra", "stopped", at(5))
    todos.add_todo(store, "release", "Tag and publish", at(2))
    health.add_finding(store, "release", "signing-key", "high", "the signing key expired")
    todos.add_todo(store, "search", "Index run summaries", at(2))
    for agent, minutes in (("builder", 2), ("reviewer", 4)):
        from loopx_core.ops.health import beat

        beat(store.root, agent, T0 - timedelta(minutes=minutes))


# -- in process (fast enough for generated inputs) ---------------------------------------------------


def asgi(
    app: Any,
    method: str,
    path: str,
    *,
    headers: dict[str, str] | None = None,
    body: bytes = b"",
    host: str = "127.0.0.1:8765",
) -> Reply:
    """One request through the ASGI app itself (the real middleware and routes, no socket).

    `path` is the raw request target (percent-encoding kept, as a client sends it); the path
    is decoded as uvicorn decodes it.
    """
    import asyncio
    from urllib.parse import unquote

    raw_path, _, query = path.partition("?")
    sent = [(b"host", host.encode("latin-1"))] + [
        (k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in (headers or {}).items()
    ]
    if body:
        sent.append((b"content-length", str(len(body)).encode()))
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": unquote(raw_path),
        "raw_path": raw_path.encode("latin-1"),
        "query_string": query.encode("latin-1"),
        "root_path": "",
        "headers": sent,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8765),
    }
    out: dict[str, Any] = {"status": 0, "headers": [], "body": b""}
    chunks = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        return chunks.pop(0) if chunks else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            out["status"] = message["status"]
            out["headers"] = message.get("headers", [])
        elif message["type"] == "http.response.body":
            out["body"] += message.get("body", b"")

    asyncio.run(app(scope, receive, send))
    found = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in out["headers"]}
    return Reply(out["status"], found, out["body"].decode("utf-8", "replace"))


def signed_in(token: str) -> dict[str, str]:
    """The Cookie header of a browser signed in with `token`."""
    from loopx_core.dashboard.security import Guard

    return {"Cookie": f"{Guard(token, loopback_only=True).cookie_name}={token}"}
