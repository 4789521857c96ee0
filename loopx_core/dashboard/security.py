"""The dashboard's guard: a per-launch token, its cookie, the CSRF check, and the bind rules.

As Jupyter does, the URL `loopx dashboard` prints carries the token (`/?token=...`); the
first request with it gets an HttpOnly, SameSite=Strict cookie and is redirected to the same
page without the token, so it never stays in the address bar, history or a Referer. Every
request needs the cookie (or the token); every POST also needs the page's CSRF field (an
HMAC of the token, so the token itself is never in a page) and an Origin (or Referer) of
this very server. Bound to loopback, the Host header must name loopback too (no DNS
rebinding).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import re
import secrets
from dataclasses import dataclass
from http.cookies import SimpleCookie
from urllib.parse import parse_qsl, urlencode, urlsplit

from loopx_core.errors import UsageError

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
TOKEN_BYTES = 24
MIN_TOKEN_CHARS = 16
TOKEN_CHARS = "A-Z a-z 0-9 - . _ ~ + / ="
TOKEN_PATTERN = re.compile(r"[A-Za-z0-9._~+/=-]+")
"""What a given token may hold: safe in a URL query, a Set-Cookie header and a terminal alike
(a `;`, `"`, `\\`, space or non-ASCII letter would break the cookie, so sign-in never held)."""


def is_loopback(host: str) -> bool:
    """True for `localhost` and any loopback address (127.0.0.0/8, ::1)."""
    name = host.strip().strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def checked_token(token: str, option: str) -> str:
    """A given token, stripped: refused (exit 2) when too short to resist guessing or unsafe."""
    token = token.strip()
    if len(token) < MIN_TOKEN_CHARS or not TOKEN_PATTERN.fullmatch(token):
        raise UsageError(f"{option} must be at least {MIN_TOKEN_CHARS} characters, each one of {TOKEN_CHARS}")
    return token


def launch_token(host: str, token: str | None) -> str:
    """The token for this launch: the one given, or a fresh random one on loopback.

    A non-loopback bind without an explicit token is refused (anyone on the network could
    otherwise reach the URL before the owner); a token too short to resist guessing too.
    """
    if token is not None:
        return checked_token(token, "--token")
    if not is_loopback(host):
        raise UsageError(
            f"--host {host} serves the dashboard beyond this machine: give an explicit --token too"
        )
    return secrets.token_urlsafe(TOKEN_BYTES)


@dataclass(frozen=True)
class Guard:
    """Checks a request's token, cookie, CSRF field, Origin and Host for one launch."""

    token: str
    loopback_only: bool
    metrics_token: str | None = None
    """A second token that reads `/metrics` alone (a scraper's), besides the launch's own."""

    @property
    def cookie_name(self) -> str:
        """Per launch (two dashboards on one machine keep their own cookie)."""
        return "loopx_dashboard_" + hashlib.sha256(self.token.encode()).hexdigest()[:10]

    @property
    def csrf(self) -> str:
        """The CSRF field every form carries: derived from the token, never the token."""
        return hmac.new(self.token.encode(), b"loopx-dashboard-csrf", hashlib.sha256).hexdigest()

    def matches(self, value: str | None) -> bool:
        """True when `value` is this launch's token (constant-time)."""
        return value is not None and hmac.compare_digest(value.encode(), self.token.encode())

    def scrape_allowed(self, authorization: str, cookie_header: str) -> bool:
        """`/metrics`: a `Bearer` token (the launch's or the metrics token), or a signed-in browser."""
        scheme, _, given = authorization.partition(" ")
        if scheme.lower() == "bearer" and given.strip():
            given = given.strip()
            extra = self.metrics_token is not None and hmac.compare_digest(
                given.encode(), self.metrics_token.encode()
            )
            return self.matches(given) or extra
        return self.matches(self.cookie_token(cookie_header))

    def csrf_matches(self, value: str | None) -> bool:
        """True when `value` is this launch's CSRF field (constant-time)."""
        return value is not None and hmac.compare_digest(value.encode(), self.csrf.encode())

    def cookie_token(self, cookie_header: str) -> str | None:
        """The token in the request's cookie header, if any."""
        cookies: SimpleCookie = SimpleCookie()
        try:
            cookies.load(cookie_header)
        except Exception:  # a malformed Cookie header is just no cookie
            return None
        morsel = cookies.get(self.cookie_name)
        return morsel.value if morsel is not None else None

    def set_cookie(self) -> str:
        """The Set-Cookie header value that signs this browser in."""
        return f"{self.cookie_name}={self.token}; Path=/; HttpOnly; SameSite=Strict"

    def host_allowed(self, host_header: str) -> bool:
        """Bound to loopback: the Host header names loopback (a rebinding name is refused)."""
        if not self.loopback_only:
            return True
        return is_loopback(host_of(host_header))

    def same_origin(self, origin: str | None, referer: str | None, host_header: str) -> bool:
        """True when the POST comes from a page of this server (Origin, else Referer).

        An Origin that is there decides alone: `null` (a sandboxed frame, a `file:` page, a
        cross-site redirect) is an opaque origin, never this server, whatever the Referer says.
        Without an Origin, the Referer must name this server; without either, refused.
        """
        source = origin if origin is not None else referer
        if not source or source == "null":
            return False
        parts = urlsplit(source)
        return parts.scheme in ("http", "https") and parts.netloc.lower() == host_header.strip().lower()


def host_of(host_header: str) -> str:
    """The host name in a Host header (`[::1]:8080` -> `::1`, `localhost:80` -> `localhost`)."""
    value = host_header.strip()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def local_path(value: str | None) -> str | None:
    """`value` as a path on this server, or None when it is not one.

    A browser reads `//host`, `/\\host` and `\\host` (tabs and newlines dropped) as another
    server, so any of those, a scheme or a control character is None: a redirect the
    dashboard sends never leaves it.
    """
    if not value or not value.startswith("/") or value.startswith("//"):
        return None
    if "\\" in value or not value.isprintable():
        return None
    parts = urlsplit(value)
    return parts.path if not parts.scheme and not parts.netloc else None


def without_token(path: str, query: str) -> str:
    """The same URL with the `token` parameter removed (where the sign-in redirects to).

    The target is always a path on this server (a request line of `//evil.example/?token=...`
    is redirected to `/`, not to another site).
    """
    kept = [(k, v) for k, v in parse_qsl(query, keep_blank_values=True) if k != "token"]
    return (local_path(path) or "/") + ("?" + urlencode(kept) if kept else "")
