"""`loopx dashboard` as a command: its refusals are one line and a documented exit code; Ctrl-C is clean.

Exit codes (docs/cli.md): 2 a bad --port, --host or --token, or a non-loopback --host
without --token; 3 no LoopX state; 7 a port that cannot be bound.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopx_core.dashboard.security import is_loopback, launch_token, without_token
from loopx_core.errors import UsageError
from loopx_core.store.files import FileStore
from tests.browser import T0_ISO, request, served_cli
from tests.conftest import Project, run_loopx

LONG_TOKEN = "k" * 32


def one_line_error(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("loopx: error: "), stderr
    assert "Traceback" not in stderr and "/tmp" not in stderr
    return lines[0]


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (["--host", "0.0.0.0"], 2, "give an explicit --token"),
        (["--host", "192.0.2.10"], 2, "give an explicit --token"),
        (["--token", "short"], 2, "at least 16"),
        (["--token", "has a space in it ok"], 2, "each one of A-Z"),
        (["--token", "semicolon;in-the-cookie"], 2, "each one of A-Z"),
        (["--token", "\u00e9" * 16], 2, "each one of A-Z"),
        (["--port", "70000"], 2, "not a port number"),
        (["--port", "-1"], 2, "not a port number"),
        (["--host", "no such host name.invalid", "--token", LONG_TOKEN], 2, "is not an address"),
    ],
)
def test_refusals_are_one_line(project: Project, args: list[str], code: int, says: str) -> None:
    result = run_loopx("dashboard", *args, root=project.root)
    assert result.exit_code == code
    assert says in one_line_error(result.stderr)
    assert result.stdout == ""


def test_a_busy_port_is_exit_7(project: Project) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        result = run_loopx("dashboard", "--port", str(port), root=project.root)
    assert result.exit_code == 7
    assert "cannot listen on 127.0.0.1" in one_line_error(result.stderr)


def test_no_state_is_exit_3(tmp_path: Path) -> None:
    result = run_loopx("dashboard", "--port", "0", root=tmp_path)
    assert result.exit_code == 3
    one_line_error(result.stderr)


def test_a_bad_clock_is_exit_2(project: Project) -> None:
    result = run_loopx("dashboard", "--port", "0", root=project.root, now="yesterday")
    assert result.exit_code == 2
    assert "LOOPX_NOW" in one_line_error(result.stderr)


def test_ctrl_c_with_an_open_event_stream_exits_cleanly(project: Project) -> None:
    FileStore(project.root)
    import http.client

    with served_cli(project.root, env={"LOOPX_NOW": T0_ISO}) as site:
        assert request(site, "GET", "/").status == 200
        conn = http.client.HTTPConnection("127.0.0.1", int(site.base.rsplit(":", 1)[1]), timeout=10)
        conn.request("GET", "/events", headers={"Cookie": f"{_cookie(site.token)}={site.token}"})
        assert conn.getresponse().status == 200
        process = site.process
        assert process is not None
        started = time.monotonic()
        process.send_signal(2)
        process.wait(timeout=10)
        conn.close()
    assert process.returncode == 0
    assert time.monotonic() - started < 5
    assert process.stderr is not None and process.stderr.read() == ""


def test_an_explicit_token_on_all_interfaces(project: Project) -> None:
    with served_cli(
        project.root, "--host", "0.0.0.0", "--token", LONG_TOKEN, env={"LOOPX_NOW": T0_ISO}
    ) as site:
        assert site.url.startswith("http://127.0.0.1:") and site.token == LONG_TOKEN
        assert request(site, "GET", "/").status == 200
        assert request(site, "GET", "/", signed_in=False).status == 403
        process = site.process
    assert process is not None and process.stdout is not None
    assert "anyone who can reach it needs the token" in process.stdout.read()


@pytest.mark.parametrize("host", ["[::1]", "::1", " localhost "])
def test_loopback_as_a_url_writes_it(project: Project, host: str) -> None:
    with served_cli(project.root, "--host", host, env={"LOOPX_NOW": T0_ISO}) as site:
        assert urlsplit(site.url).hostname in ("::1", "localhost")
        assert request(site, "GET", "/").status == 200
        assert request(site, "GET", "/", headers={"Host": "evil.example"}).status == 403


def _cookie(token: str) -> str:
    from loopx_core.dashboard.security import Guard

    return Guard(token, loopback_only=True).cookie_name


# -- the bind rule, for any host and token -------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(
        st.ip_addresses().map(str),
        st.sampled_from(["localhost", "LOCALHOST", "[::1]", "0.0.0.0", "::", "example.org"]),
    )
)
def test_only_loopback_gets_a_token_of_its_own(host: str) -> None:
    if is_loopback(host):
        assert len(launch_token(host, None)) >= 16
    else:
        with pytest.raises(UsageError, match="explicit --token"):
            launch_token(host, None)
    assert launch_token(host, LONG_TOKEN) == LONG_TOKEN


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["token", "a", "b", "x y"]), st.text(max_size=8)), max_size=5))
def test_the_sign_in_redirect_never_keeps_the_token(pairs: list[tuple[str, str]]) -> None:
    from urllib.parse import parse_qsl, urlencode, urlsplit

    target = without_token("/goals/g", urlencode(pairs))
    kept = parse_qsl(urlsplit(target).query, keep_blank_values=True)
    assert all(k != "token" for k, _ in kept)
    assert kept == [(k, v) for k, v in pairs if k != "token"]
