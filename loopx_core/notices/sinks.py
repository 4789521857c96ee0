"""Sink kinds: the JSON-lines file (`file://PATH`), Apprise (every URL it knows), and plugins'.

A sink kind is a `NoticeSink` object: the URL schemes it serves, `check(url)` when a sink is
added, `send(url, notice, root)` to deliver (raise to fail: the outbox retries it). Plugins
register kinds through the `loopx_register_notice_sinks` hook; a scheme no kind serves goes
to Apprise. URLs may hold credentials: `redact` shows a sink without them, everywhere.
"""

from __future__ import annotations

import json
import re
import stat
from collections.abc import Iterable
from itertools import islice
from pathlib import Path
from urllib.parse import urlsplit

from loopx_core.errors import LoopxError, UsageError
from loopx_core.escapes import clipped, visible
from loopx_core.models.records import Notice

FILE_SCHEME = "file"
ADDRESS_SCHEMES = frozenset({"json", "jsons", "xml", "xmls", "form", "forms", "mailto", "mailtos"})
"""Apprise schemes whose host is a network address, safe to show; elsewhere it may be a token."""
_SCHEME_RE = re.compile(r"^([a-z][a-z0-9+.-]{0,31})://", re.I)
DEDUP_LINES = 500
"""How many of a JSON-lines file's last lines are searched for a notice already written."""


class SinkError(Exception):
    """A delivery that failed; its message is shown (it must not hold the URL's secrets)."""


class NoticeSink:
    """A kind of sink; subclass it, set `schemes`, and implement `send`."""

    schemes: tuple[str, ...] = ()
    """The URL schemes this kind serves, lower case, e.g. `("acme",)` for `acme://...`."""
    title: str = ""
    """What `loopx notify list` calls it."""

    def check(self, url: str) -> str | None:
        """Why `url` cannot be a sink of this kind (no secret in the text), or None when it can."""
        return None

    def send(self, url: str, notice: Notice, root: Path) -> None:
        """Deliver `notice`; raise (any exception) when it did not arrive."""
        raise NotImplementedError

    def shown(self, url: str) -> str:
        """`url` without credentials."""
        return redact(url)


def scheme_of(url: str) -> str | None:
    """The URL's scheme, lower case, or None when it has none."""
    found = _SCHEME_RE.match(url)
    return found.group(1).lower() if found else None


def redact(url: str, root: Path | None = None) -> str:
    """A sink as LoopX shows it: no user, password, token, path secret or query value."""
    scheme = scheme_of(url)
    if scheme is None:
        return "<not a URL>"
    if scheme == FILE_SCHEME:
        try:
            return f"file://{shown_file(file_path(url, root or Path('.')), root)}"
        except UsageError:  # a hand-edited sink naming no file: shown, refused when it is used
            return "file://<no file named>"
    if scheme not in ADDRESS_SCHEMES:
        return f"{scheme}://***"
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return f"{scheme}://***"
    user = "***@" if "@" in parts.netloc else ""
    path = "/***" if parts.path.strip("/") else ""
    query = "?***" if parts.query else ""
    return f"{scheme}://{user}{host}{port}{path}{query}"


def _port(url: str) -> int | None:
    """The URL's port when its authority ends in `:digits` (a token such as `123:abc` is none)."""
    from urllib.parse import urlsplit

    try:
        netloc = urlsplit(url).netloc
    except ValueError:
        return None
    host = netloc.rpartition("@")[2]
    text = host.rpartition(":")[2] if ":" in host and not host.endswith("]") else ""
    return int(text) if text.isascii() and text.isdigit() else None  # `²` is a digit, not a number


def file_path(url: str, root: Path) -> Path:
    """The file a `file://PATH` sink writes: `~` is the home, a relative path is the project's."""
    text = url[len("file://") :]
    if not text.strip():
        # no URL in the words: a delivery error's URLs are redacted, and would garble the example
        raise UsageError("a file sink names no file: put a path after the scheme, such as notices.jsonl")
    try:
        path = Path(text).expanduser()
    except RuntimeError:  # `~someone/...` for a user this machine does not know
        raise UsageError("a file sink's ~user names no user of this machine: use ~/ or a full path") from None
    return path if path.is_absolute() else root / path


def shown_file(path: Path, root: Path | None) -> str:
    """A file sink's path relative to the project, else under `~`, else by its name only."""
    for base, prefix in ((root, ""), (Path.home(), "~/")):
        if base is None:
            continue
        try:
            return prefix + str(path.relative_to(base))
        except ValueError:
            continue
    return f".../{path.name}"


def notice_line(notice: Notice) -> bytes:
    """The JSON line a file sink appends."""
    return json.dumps(notice.dump(exclude_none=True), separators=(",", ":")).encode()


class FileSink(NoticeSink):
    """`file://PATH`: one JSON line per notice, appended durably, never twice for one notice id."""

    schemes = (FILE_SCHEME,)
    title = "JSON lines file"

    def check(self, url: str) -> str | None:
        """A file sink names a file, not a folder."""
        text = url[len("file://") :]
        if not text.strip() or text.endswith("/"):
            return "a file sink names a file: file://notices.jsonl or file:///var/log/loopx.jsonl"
        if "\x00" in text:
            return "the file name holds a NUL character"
        try:
            Path(text).expanduser()
        except RuntimeError:  # `~someone/...` for a user this machine does not know
            return "a file sink's ~user names no user of this machine: use ~/ or a full path"
        return None

    def send(self, url: str, notice: Notice, root: Path) -> None:
        """Append the notice's line unless the file's tail already holds it (a retried delivery)."""
        from loopx_core.store.ledger import append_line, reverse_lines

        path = file_path(url, root)
        marker = f'"notice_id":"{notice.notice_id}"'.encode()
        try:
            mode = path.stat().st_mode
        except FileNotFoundError:
            mode = None  # the first notice creates it
        except OSError as exc:
            raise SinkError(f"cannot append to {path.name}: {exc.strerror or exc}") from None
        if mode is not None and not stat.S_ISREG(mode):
            # a FIFO nobody reads would block the delivery (and the command) for ever; a device
            # such as /dev/zero reads without end
            raise SinkError(f"cannot append to {path.name}: it is not a regular file") from None
        try:
            if any(marker in line for line in islice(reverse_lines(path), DEDUP_LINES)):
                return
            append_line(path, notice_line(notice))
        except OSError as exc:
            raise SinkError(f"cannot append to {path.name}: {exc.strerror or exc}") from None
        except Exception as exc:  # StateInvalidError from the reader: a folder, no permission
            raise SinkError(f"cannot append to {path.name}: {getattr(exc, 'message', exc)}") from None


class AppriseSink(NoticeSink):
    """Every URL Apprise knows (`json://`, `mailto://`, `ntfy://`, ...); imported only to send."""

    title = "Apprise"

    def check(self, url: str) -> str | None:
        """Apprise must know the URL's scheme and parse it."""
        import apprise

        if apprise.Apprise.instantiate(url) is None:
            return f"neither LoopX nor Apprise knows the sink {redact(url)}"
        return None

    def send(self, url: str, notice: Notice, root: Path) -> None:
        """Send through Apprise; its warnings become the error (never printed)."""
        import logging

        import apprise

        client = apprise.Apprise()
        with apprise.LogCapture(level=logging.WARNING) as log:
            if not client.add(url):
                raise SinkError(f"Apprise cannot use {redact(url)}")
            # what a person reads (a phone, a terminal tailing ntfy): control characters as escapes
            ok = client.notify(title=visible(notice.title, newlines=False), body=visible(body_text(notice)))
        if not ok:
            lines = [line for line in log.getvalue().splitlines() if line.strip()]
            detail = lines[-1].split(" - ", 2)[-1] if lines else "Apprise reported a failed delivery"
            raise SinkError(_scrub(detail, url))


def _scrub(text: str, url: str) -> str:
    """An error text without the URL or any URL-looking part of it."""
    text = text.replace(url, redact(url))
    return clipped(re.sub(r"[a-z][a-z0-9+.-]*://\S+", lambda m: redact(m.group(0)), text), 200)


def body_text(notice: Notice) -> str:
    """The notice as a short text message (its id last, so a reader can match duplicates)."""
    lines = [notice.body]
    where = ", ".join(f"{k}: {v}" for k, v in (("goal", notice.goal_id), ("agent", notice.agent_id)) if v)
    if where:
        lines.append(where)
    lines.append(f"event: {notice.kind}; notice: {notice.notice_id}")
    return "\n".join(lines)


BUILT_IN: tuple[NoticeSink, ...] = (FileSink(),)
FALLBACK = AppriseSink()


class SinkKinds:
    """The sink kinds in force: the built-ins, then plugins' (a scheme served twice is refused)."""

    def __init__(self, extra: Iterable[NoticeSink] = ()) -> None:
        self.by_scheme: dict[str, NoticeSink] = {}
        for kind in (*BUILT_IN, *extra):
            for scheme in kind.schemes:
                if scheme in self.by_scheme:
                    raise UsageError(f"the notice sink scheme {scheme[:32]!r} is served twice")
                self.by_scheme[scheme] = kind

    def for_url(self, url: str) -> NoticeSink:
        """The kind that serves `url` (Apprise for any scheme no kind claims)."""
        scheme = scheme_of(url)
        if scheme is None:
            raise UsageError("a sink is a URL: file://notices.jsonl, json://host:port/path, mailto://...")
        return self.by_scheme.get(scheme, FALLBACK)

    def check(self, url: str) -> None:
        """Refuse (usage error, secrets never echoed) a URL no kind can send to."""
        if any(ch in url for ch in "\n\r\t") or len(url) > 2000:
            raise UsageError("a sink URL is one line of at most 2000 characters")
        kind = self.for_url(url)
        port = _port(url)
        if port is not None and not 0 < port < 65536:
            shown = port if port < 10**9 else "given"
            raise UsageError(f"the sink's port {shown} is not a port (1-65535): no notice could ever go")
        try:
            problem = kind.check(url)
        except LoopxError:
            raise
        except Exception as exc:  # a plugin's bug is one line, never a traceback
            raise LoopxError(
                f"notice sink {kind.title or type(kind).__name__!r} failed to check the URL: "
                f"{type(exc).__name__}",
                code="plugin_failed",
            ) from None
        if problem:
            raise UsageError(problem)
