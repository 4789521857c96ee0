"""The Starlette application: pages, the event stream, owner actions, static files, error pages.

Every request passes the guard (`security`); every page is rendered by the dashboard's own
autoescaping Jinja environment from the read-only projections in `views`; every action calls
the CLI's own op (`actions`). No request ever answers with a traceback: a bad goal id is a
404 page, a bad form a 400 with its message, anything unexpected one line (500).
"""

from __future__ import annotations

import contextlib
import functools
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from loopx_core.clock import now
from loopx_core.dashboard import actions, views
from loopx_core.dashboard.render import render
from loopx_core.dashboard.security import Guard, local_path, without_token
from loopx_core.dashboard.watch import POLL_SECONDS, Tokens, Watcher, safe_tokens, tokener
from loopx_core.errors import EXIT_CODES, ExitCode, LoopxError, NotFoundError, UsageError
from loopx_core.store.base import Store

STATIC = Path(__file__).resolve().parent / "static"
STATIC_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".svg": "image/svg+xml",
}
SHIPPED = frozenset(p.name for p in STATIC.iterdir() if p.is_file() and p.suffix in STATIC_TYPES)
"""The only static names served: the files the package ships (nothing else can be named)."""
SECURITY_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        b"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
]
MAX_FORM_FIELDS = 20
MAX_FORM_BYTES = 16_384


HTTP_STATUS: dict[ExitCode, int] = {
    ExitCode.USAGE: 400,
    ExitCode.NOT_FOUND: 404,
    ExitCode.LOCK_TIMEOUT: 503,
    **{
        code: 409
        for code in EXIT_CODES
        if code
        not in (ExitCode.OK, ExitCode.INTERNAL, ExitCode.USAGE, ExitCode.NOT_FOUND, ExitCode.LOCK_TIMEOUT)
    },
}
"""The HTTP status of each exit code the CLI would end with: a bad form 400, an unknown id 404,
a busy goal 503, and everything the state does not allow 409 (a refusal, a lost race, a
settlement refusal, and a damaged or newer state file, which `loopx doctor` names). Only an
internal error (a bug) is a 500."""


def status_of(error: LoopxError) -> int:
    """The HTTP status a LoopX error answers with (its exit code's, `HTTP_STATUS`)."""
    return HTTP_STATUS.get(error.exit_code, 500)


class Dashboard:
    """One launch: its store, guard, watcher and the reads its pages keep (`views.ReadCache`)."""

    def __init__(self, store: Store, guard: Guard, *, poll_seconds: float = POLL_SECONDS) -> None:
        self.store = store
        self.guard = guard
        self.tokens = safe_tokens(tokener(store))
        self.cache = views.ReadCache()
        self._renewing = threading.Lock()
        self.watcher = Watcher(lambda: self.tokens().fingerprint, poll_seconds=poll_seconds)

    def page_tokens(self) -> Tokens:
        """The store's tokens as a page starts (what it may keep reads by)."""
        tokens = self.tokens()
        with self._renewing:
            return self.cache.renew(tokens)

    def context(self, request: Request, nav: str) -> dict[str, Any]:
        """What every page needs: navigation, CSRF field, the render-time fingerprint, a notice."""
        done = request.query_params.get("done", "")[:200]
        return {"nav": nav, "csrf": self.guard.csrf, "done": done, "path": request.url.path}

    def page(
        self, request: Request, template: str, nav: str, data: dict[str, Any], status: int = 200
    ) -> Response:
        """A rendered page."""
        html = render(template, **self.context(request, nav), **data)
        return HTMLResponse(html, status_code=status)

    def error(self, request: Request, status: int, message: str, *, signed_in: bool = True) -> Response:
        """An error page (plain text if even that cannot be rendered).

        A request that is not signed in learns nothing but the refusal (not even the store).
        """
        try:
            store = self.store.label if signed_in else ""
            data = {"status": status, "message": message, "store": store, "now": "", "fp": ""}
            return self.page(request, "error.html", "", data, status)
        except Exception:
            return PlainTextResponse(f"{status}: {message}\n", status_code=status)

    async def guarded(self, request: Request, work: Callable[[], Awaitable[Response]]) -> Response:
        """Run `work`; a LoopX error becomes its page, anything else one line (500)."""
        try:
            return await work()
        except LoopxError as error:
            return self.error(request, status_of(error), error.message)
        except ClientDisconnect:  # the browser went away mid-request: no one to answer, no bug
            return PlainTextResponse("", status_code=499)
        except Exception as error:  # the last line of defence: one line on stderr, no traceback
            sys.stderr.write(f"loopx: dashboard: internal error: {type(error).__name__}\n")
            return self.error(
                request, 500, f"internal error: {type(error).__name__} (a bug: please report it)"
            )

    async def metrics(self, request: Request) -> Response:
        """Every goal and agent in Prometheus' text format (`metrics`), read at each scrape."""

        async def work() -> Response:
            from loopx_core.dashboard import metrics

            try:
                body = await run_in_threadpool(metrics.exposition, self.store, now)
            except LoopxError as error:  # a scraper reads text, not a page
                return PlainTextResponse(
                    f"{status_of(error)}: {error.message}\n", status_code=status_of(error)
                )
            return Response(body, media_type=metrics.CONTENT_TYPE)

        return await self.guarded(request, work)

    # -- pages -------------------------------------------------------------------------------
    async def attention(self, request: Request) -> Response:
        """The attention queue across goals."""

        async def work() -> Response:
            tokens = await run_in_threadpool(self.page_tokens)
            fp = tokens.fingerprint
            data = await run_in_threadpool(
                functools.partial(views.attention_page, self.store, now(), cache=self.cache, tokens=tokens)
            )
            return self.page(request, "attention.html", "attention", {**data, "fp": fp})

        return await self.guarded(request, work)

    async def goal(self, request: Request) -> Response:
        """One goal."""
        goal_id = request.path_params["goal_id"]

        async def work() -> Response:
            tokens = await run_in_threadpool(self.page_tokens)
            fp = tokens.fingerprint
            data = await run_in_threadpool(
                functools.partial(
                    views.goal_page, self.store, goal_id, now(), cache=self.cache, tokens=tokens
                )
            )
            return self.page(request, "goal.html", "goal", {**data, "fp": fp})

        return await self.guarded(request, work)

    async def agents(self, request: Request) -> Response:
        """Agents and hosts."""

        async def work() -> Response:
            tokens = await run_in_threadpool(self.page_tokens)
            fp = tokens.fingerprint
            data = await run_in_threadpool(
                functools.partial(views.agents_page, self.store, now(), cache=self.cache, tokens=tokens)
            )
            return self.page(request, "agents.html", "agents", {**data, "fp": fp})

        return await self.guarded(request, work)

    async def events(self, request: Request) -> Response:
        """The server-sent event stream every page listens to."""
        stream = self.watcher.events(request.query_params.get("fp") or None)
        return StreamingResponse(stream, media_type="text/event-stream", headers={"x-accel-buffering": "no"})

    async def static(self, request: Request) -> Response:
        """A file the package ships, by its exact name; any other name (`..` too) is refused."""
        name = request.path_params["name"]
        if ".." in name or "/" in name or "\\" in name or "\x00" in name:
            return self.error(request, 400, "bad static path")
        if name not in SHIPPED:
            return self.error(request, 404, "no such static file")
        body = await run_in_threadpool((STATIC / name).read_bytes)
        return Response(body, media_type=STATIC_TYPES[Path(name).suffix])

    # -- actions -------------------------------------------------------------------------------
    async def act(self, request: Request) -> Response:
        """An owner action: same origin, CSRF field, then the CLI's op; 303 back to the page."""
        headers = request.headers
        if not self.guard.same_origin(headers.get("origin"), headers.get("referer"), headers.get("host", "")):
            return self.error(request, 403, "refused: the form did not come from this dashboard's page")

        async def work() -> Response:
            form = await self.form(request)
            if not self.guard.csrf_matches(form.get("csrf")):
                return self.error(request, 403, "refused: the form's CSRF field is missing or wrong")
            name = request.path_params["action"]
            action = actions.ACTIONS.get(name)
            if action is None:
                raise NotFoundError(f"no such action {name[:40]!r}")
            goal_id = views.require_goal_id(request.path_params["goal_id"])
            message = await run_in_threadpool(action, self.store, goal_id, form, now())
            back = local_path(form.get("back")) or f"/goals/{goal_id}"
            return RedirectResponse(f"{back}?done={quote(message)}", status_code=303)

        return await self.guarded(request, work)

    async def form(self, request: Request) -> dict[str, str]:
        """The posted form as strings; too big, a file, or not a form is a `UsageError`."""
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "application/x-www-form-urlencoded":
            raise UsageError("an action must be posted as a form (application/x-www-form-urlencoded)")
        size = 0
        body = b""
        async for chunk in request.stream():
            size += len(chunk)
            if size > MAX_FORM_BYTES:
                raise UsageError(f"the form is larger than {MAX_FORM_BYTES} bytes")
            body += chunk
        try:
            pairs = parse_qsl(
                body.decode("utf-8"),
                keep_blank_values=True,
                max_num_fields=MAX_FORM_FIELDS,
                errors="strict",  # `%ff` is refused, never stored as U+FFFD
            )
        except (UnicodeDecodeError, ValueError):
            raise UsageError("the form is not valid UTF-8 form data, or has too many fields") from None
        if any("\x00" in key or "\x00" in value for key, value in pairs):
            # no command line can carry a NUL (argv ends at one): the CLI twin could never send it
            raise UsageError("a form field holds a NUL character")
        return dict(pairs)

    async def not_found(self, request: Request, exc: Exception) -> Response:
        """Unknown paths and methods."""
        status = exc.status_code if isinstance(exc, HTTPException) else 404
        return self.error(request, status, "no such page" if status == 404 else "method not allowed")


class GuardMiddleware:
    """Token and Host checks on every HTTP request; security headers on every response."""

    def __init__(self, app: ASGIApp, dashboard: Dashboard) -> None:
        self.app = app
        self.dashboard = dashboard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The ASGI entry point."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        guard = self.dashboard.guard
        request = Request(scope, receive)
        host = request.headers.get("host", "")

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], *SECURITY_HEADERS]
            await send(message)

        if not bytes(scope.get("query_string", b"")).isascii():
            # HTTP servers refuse such a request line; another ASGI server might pass it on
            await PlainTextResponse("400: the query string is not ASCII\n", 400)(scope, receive, secured)
            return
        if not guard.host_allowed(host):
            response = PlainTextResponse("403: refused: this dashboard answers only on loopback\n", 403)
            await response(scope, receive, secured)
            return
        if request.url.path == "/metrics":
            headers = request.headers
            if not guard.scrape_allowed(headers.get("authorization", ""), headers.get("cookie", "")):
                refusal = PlainTextResponse(
                    "401: /metrics needs `Authorization: Bearer <token>` (the dashboard's or --metrics-token)\n",
                    401,
                    headers={"www-authenticate": 'Bearer realm="loopx"'},
                )
                await refusal(scope, receive, secured)
                return
            await self.app(scope, receive, secured)
            return
        given = request.query_params.get("token")
        if given is not None:
            if not guard.matches(given):
                refusal = self.dashboard.error(request, 403, "refused: wrong token", signed_in=False)
                await refusal(scope, receive, secured)
                return
            target = without_token(request.url.path, request.url.query)
            response = RedirectResponse(target, status_code=303)
            response.headers.append("set-cookie", guard.set_cookie())
            await response(scope, receive, secured)
            return
        if not guard.matches(guard.cookie_token(request.headers.get("cookie", ""))):
            message = "refused: no token. Open the URL `loopx dashboard` printed (it carries ?token=...)"
            await self.dashboard.error(request, 403, message, signed_in=False)(scope, receive, secured)
            return
        await self.app(scope, receive, secured)


def create_app(store: Store, guard: Guard, *, poll_seconds: float = POLL_SECONDS) -> ASGIApp:
    """The dashboard for `store`, guarded by `guard`."""
    dashboard = Dashboard(store, guard, poll_seconds=poll_seconds)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        dashboard.watcher.start()
        try:
            yield
        finally:
            await dashboard.watcher.stop()

    routes = [
        Route("/", dashboard.attention, methods=["GET"]),
        Route("/goals/{goal_id}", dashboard.goal, methods=["GET"]),
        Route("/goals/{goal_id}/{action}", dashboard.act, methods=["POST"]),
        Route("/agents", dashboard.agents, methods=["GET"]),
        Route("/events", dashboard.events, methods=["GET"]),
        Route("/static/{name:path}", dashboard.static, methods=["GET"]),
        Route("/metrics", dashboard.metrics, methods=["GET"]),
    ]
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={404: dashboard.not_found, 405: dashboard.not_found},
    )
    app.router.redirect_slashes = False  # `/agents/` is simply not a page (no redirect to build)
    return GuardMiddleware(app, dashboard)
