"""Class: a credential in a store DSN is never written and never printed.

Generated DSNs in both libpq forms (URL and key=value), with users, hosts, ports, options
and passwords of arbitrary text: the redacted form never holds the password, the user or an
option value, and is always `postgresql://host[:port]/db`; recording one with a password
is refused before anything is written, and the refusal never echoes it; a malformed DSN is
a usage error that never echoes it either.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopx_core.errors import UsageError
from loopx_core.store import dsn
from loopx_core.store.choice import config_path, record
from tests.conftest import run_loopx
from tests.dsns import DSNS

SHOWN = re.compile(r"postgresql://[^/@?]*(/[^/@?]*)?(\?service=[^@]*)?")


@settings(max_examples=150, deadline=None)
@given(text=DSNS)
def test_the_shown_dsn_holds_no_credential(text: str) -> None:
    shown = dsn.shown(text)
    params = dsn.parse(text)
    assert SHOWN.fullmatch(shown), shown
    if "password" in params:
        assert params["password"] not in shown
    assert "sslmode" not in shown and "application_name" not in shown and "@" not in shown
    assert shown.endswith("/" + params["dbname"])


@settings(max_examples=100, deadline=None)
@given(text=DSNS)
def test_recording_refuses_a_password_and_writes_nothing(
    tmp_path_factory: pytest.TempPathFactory, text: str
) -> None:
    root = tmp_path_factory.mktemp("p")
    has_password = "password" in dsn.parse(text)
    if has_password:
        with pytest.raises(UsageError) as refused:
            record(root, text)
        assert dsn.parse(text)["password"] not in refused.value.message
        assert not config_path(root).exists()
    else:
        record(root, text)
        assert config_path(root).read_text().count(dsn.parse(text).get("host", "")) >= 1


@settings(max_examples=100, deadline=None)
@given(
    garbage=st.text(st.characters(exclude_characters="'\\"), max_size=40).map(
        lambda s: "host='" + s + "unterminated"
    )
)
def test_a_malformed_dsn_is_a_usage_error_that_never_echoes_it(garbage: str) -> None:
    with pytest.raises(UsageError) as refused:
        dsn.shown(garbage)
    assert garbage not in refused.value.message and "unterminated" not in refused.value.message


@pytest.mark.parametrize(
    "secret_dsn",
    ["postgresql://loopx:s3cr3t-pw@db.example/loopx", "host=db.example dbname=loopx password=s3cr3t-pw"],
)
def test_init_refuses_a_password_in_one_line_without_echoing_it(tmp_path: Path, secret_dsn: str) -> None:
    result = run_loopx("init", "--store", secret_dsn, "-f", "json", root=tmp_path)
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert "s3cr3t-pw" not in result.stdout + result.stderr and "PGPASSWORD" in result.stderr
    assert not (tmp_path / ".loopx").exists()
