"""`loopx dashboard`: serve the local web dashboard (docs/dashboard.md)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from loopx_core.cli.formats import Format
from loopx_core.cli.output import reporting

DEFAULT_PORT = 8765


def dashboard(
    ctx: typer.Context,
    port: Annotated[int, typer.Option("--port", help="Port to listen on (0: any free one).")] = DEFAULT_PORT,
    open_browser: Annotated[
        bool, typer.Option("--open", help="Open the dashboard in the default browser.")
    ] = False,
    host: Annotated[
        str,
        typer.Option("--host", help="Address to bind; anything but loopback needs an explicit --token."),
    ] = "127.0.0.1",
    token: Annotated[
        str | None,
        typer.Option(
            "--token", help="The access token (default: a new random one per launch).", show_default=False
        ),
    ] = None,
    metrics_token: Annotated[
        str | None,
        typer.Option(
            "--metrics-token",
            help="A token that reads /metrics alone (a Prometheus scraper's bearer token).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Serve the web dashboard: attention queue, goals, agents; live; owner actions.

    Prints the URL to open (it carries the per-launch token, as Jupyter's does) and serves
    until Ctrl-C. Every owner action calls the same operation as its CLI command. Exit codes:
    2 a bad --port or --host, or a non-loopback --host without --token; 3 no LoopX state
    here; 7 the port cannot be bound. `/metrics` serves Prometheus' text format to a bearer of
    the token or of --metrics-token.
    """
    from loopx_core.clock import now
    from loopx_core.dashboard.app import create_app
    from loopx_core.dashboard.security import Guard, checked_token, is_loopback, launch_token
    from loopx_core.dashboard.server import bind, listen_name, serve, url
    from loopx_core.errors import UsageError
    from loopx_core.store.choice import open_store
    from loopx_core.store.roots import find_root

    with reporting(Format.markdown):
        host = listen_name(host)
        secret = launch_token(host, token)
        scraper = checked_token(metrics_token, "--metrics-token") if metrics_token is not None else None
        if scraper is not None and scraper == secret:
            raise UsageError("--metrics-token must differ from --token (it reads /metrics alone)")
        now()  # a bad LOOPX_NOW is refused here (exit 2), not on every page
        store = open_store(find_root((ctx.find_root().obj or {}).get("root")), shared=True)
        store.read_registry()  # no state here: one line, exit 3, before anything listens
        sock = bind(host, port)
        address = url(host, sock, secret)
        sys.stdout.write(f"LoopX dashboard ({store.label}): {address}\n")
        if not is_loopback(host):
            sys.stdout.write(f"Listening on {host}: anyone who can reach it needs the token.\n")
        sys.stdout.write("Ctrl-C stops it.\n")
        sys.stdout.flush()
        if open_browser:
            import webbrowser

            webbrowser.open(address)
        guard = Guard(secret, loopback_only=is_loopback(host), metrics_token=scraper)
        serve(create_app(store, guard), sock)
