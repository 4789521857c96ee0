"""Class: `notify add` refuses a sink no notice could ever reach, and accepts every other.

Observed: `json://host:99999/x` and `file://~nosuchuser/n.jsonl` were accepted, and every
notice to them then failed for ever. Generated: any port after any host, in any scheme
(accepted exactly when it is 1-65535; a token such as `123456:abc` is not a port), and file
sinks under a `~user` this machine does not have. A refusal is one usage line, nothing written.
"""

from __future__ import annotations

import pwd
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopx_core.doctor.sinkkinds import sink_kinds
from loopx_core.errors import UsageError
from tests.conftest import run_loopx

USERS = {entry.pw_name for entry in pwd.getpwall()}


@given(
    scheme=st.sampled_from(["json", "xml", "form", "ntfy", "mailto"]),
    host=st.sampled_from(["localhost", "example.org", "10.0.0.1", "[::1]", "user:pw@example.org"]),
    port=st.integers(0, 10**7),
)
@settings(max_examples=200, deadline=None)
def test_a_port_is_accepted_exactly_when_it_is_one(scheme: str, host: str, port: int) -> None:
    url = f"{scheme}://{host}:{port}/path"
    if 0 < port < 65536:
        try:
            sink_kinds().check(url)
        except UsageError as error:  # Apprise's own reasons stay; never the port's
            assert "port" not in error.message, error.message
    else:
        with pytest.raises(UsageError, match="is not a port"):
            sink_kinds().check(url)


@given(st.from_regex(r"[a-z_][a-z0-9_-]{0,20}", fullmatch=True).filter(lambda u: u not in USERS))
@settings(max_examples=50, deadline=None)
def test_a_file_sink_of_an_unknown_user_is_refused(user: str) -> None:
    with pytest.raises(UsageError, match="names no user"):
        sink_kinds().check(f"file://~{user}/notices.jsonl")


@given(
    port=st.text(
        alphabet=st.characters(categories=("Nd", "No", "Nl")) | st.sampled_from("0123456789"),
        min_size=1,
        max_size=40,
    )
)
@settings(max_examples=200, deadline=None)
def test_any_digits_after_the_host_are_answered_in_one_line(port: str) -> None:
    """Unicode digits (`²`, `١٢٣`) and ports of any length: a usage error or accepted, never a crash."""
    url = f"json://localhost:{port}/path"
    try:
        sink_kinds().check(url)
    except UsageError as error:
        assert "\n" not in error.message and len(error.message) < 300
    if port.isascii() and not 0 < int(port) < 65536:
        with pytest.raises(UsageError, match="is not a port"):
            sink_kinds().check(url)


def test_a_token_with_a_colon_is_not_a_port() -> None:
    sink_kinds().check("tgram://123456789:AAbbCCddEEffGGhh/12345")


@pytest.mark.parametrize("url", ["json://localhost:99999/x", "file://~nosuchuser4242/n.jsonl"])
def test_the_cli_refuses_in_one_line_and_writes_nothing(tmp_path: Path, url: str) -> None:
    assert run_loopx("init", root=tmp_path).exit_code == 0
    before = sorted(p.name for p in (tmp_path / ".loopx").rglob("*"))
    out = run_loopx("notify", "add", url, root=tmp_path)
    assert out.exit_code == 2 and out.stderr.count("\n") == 1, out.stderr
    assert sorted(p.name for p in (tmp_path / ".loopx").rglob("*")) == before
