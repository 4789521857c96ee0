"""Serving the dashboard: bind the socket first (a busy port is one clear error), then uvicorn.

uvicorn runs with its own logging quiet (no access log, warnings only) and a short graceful
shutdown, so Ctrl-C ends the command at once even while pages hold their event streams open.
"""

from __future__ import annotations

import contextlib
import socket
from urllib.parse import quote

from loopx_core.errors import RefusedError, UsageError
from loopx_core.ids import shown_value

GRACEFUL_SECONDS = 2


def listen_name(host: str) -> str:
    """`--host` as the socket layer takes it: surrounding spaces and IPv6 brackets dropped.

    `[::1]` is how a URL writes the IPv6 loopback, so that is how an owner types it.
    """
    name = host.strip()
    return name[1:-1] if name.startswith("[") and name.endswith("]") else name


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on `host:port` (port 0: any free one); failure is a `RefusedError`."""
    if not 0 <= port <= 65535:
        raise UsageError(f"--port {port} is not a port number (0 to 65535; 0 picks a free one)")
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError):
        raise UsageError(f"--host {shown_value(host)} is not an address this machine can listen on") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise RefusedError(
            f"cannot listen on {host}:{port}: {exc.strerror or 'refused'} (try another --port, or 0)",
            code="port_unavailable",
        ) from None
    sock.set_inheritable(True)
    return sock


def url(host: str, sock: socket.socket, token: str) -> str:
    """The URL to open: loopback as a browser reaches it, the token in the query (as Jupyter's)."""
    port = sock.getsockname()[1]
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else ("[::1]" if host == "::" else host)
    if ":" in shown and not shown.startswith("["):
        shown = f"[{shown}]"
    return f"http://{shown}:{port}/?token={quote(token, safe='')}"


def serve(app: object, sock: socket.socket) -> None:
    """Serve `app` on `sock` until interrupted: Ctrl-C (SIGINT) returns, SIGTERM ends the process."""
    import uvicorn

    config = uvicorn.Config(
        app,  # type: ignore[arg-type]
        log_level="warning",
        access_log=False,
        lifespan="on",
        server_header=False,
        timeout_graceful_shutdown=GRACEFUL_SECONDS,
    )
    server = uvicorn.Server(config)
    watcher = getattr(getattr(app, "dashboard", None), "watcher", None)
    if watcher is not None:  # open event streams end as soon as the server stops, not at its timeout
        watcher.stop_when = lambda: server.should_exit
    with contextlib.suppress(KeyboardInterrupt):  # uvicorn re-raises the Ctrl-C it shut down on
        server.run(sockets=[sock])
