"""Class: a notice sink can neither leak a credential nor break a command.

Generated sink URLs with a secret in the user, password, path, query (and, for schemes whose
host may be a token, the host) never show the secret in `redact`, `notify add/list/test` or a
delivery error; a sink kind that raises anything fails that attempt only (the flush returns,
the record says why, without the URL); a damaged sink file or outbox never fails a queue or a
should-run tick.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.notices import events, outbox
from loopx_core.notices.config import add_sink
from loopx_core.notices.delivery import flush
from loopx_core.notices.emit import queue_notice
from loopx_core.notices.sinks import ADDRESS_SCHEMES, NoticeSink, SinkKinds, redact
from tests.conftest import T0, Cli, Project

SECRET = st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=10, max_size=24).map(lambda s: "S3cr" + s)
SCHEMES = st.sampled_from(["json", "jsons", "mailto", "ntfy", "tgram", "slack", "discord", "pover", "toy"])


@st.composite
def secret_urls(draw: st.DrawFn) -> tuple[str, str]:
    secret = draw(SECRET)
    scheme = draw(SCHEMES)
    where = draw(
        st.sampled_from(
            ["password", "user", "path", "query"] + ([] if scheme in ADDRESS_SCHEMES else ["host"])
        )
    )
    host = secret if where == "host" else "example.com"
    user = {"password": f"bob:{secret}@", "user": f"{secret}@"}.get(where, "")
    path = f"/{secret}/x" if where == "path" else "/x"
    query = f"?token={secret}" if where == "query" else ""
    return f"{scheme}://{user}{host}:8080{path}{query}", secret


@given(secret_urls())
def test_redact_never_shows_a_secret(case: tuple[str, str]) -> None:
    url, secret = case
    assert secret not in redact(url)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=80).filter(lambda t: not t.startswith("-")), SECRET)  # "-..." is an option
def test_notify_add_answers_any_text_in_one_line_without_echoing_it(cli: Cli, text: str, secret: str) -> None:
    url = f"{text}://u:{secret}@h/{secret}" if text.isalpha() else text + secret
    result = cli("notify", "add", url, "-f", "json")
    assert result.exit_code in (0, 2, 3), result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert secret not in result.stdout + result.stderr
    if result.exit_code:
        assert result.stderr.count("\n") == 1


class Raising(NoticeSink):
    """A sink kind whose send raises what it is told to, quoting the URL (as libraries do)."""

    schemes = ("boom",)

    def __init__(self, error: type[Exception]) -> None:
        self.error = error

    def send(self, url: str, notice, root: Path) -> None:  # type: ignore[no-untyped-def]
        raise self.error(f"could not reach {url}")


ERRORS = [
    RuntimeError,
    ValueError,
    OSError,
    TimeoutError,
    KeyError,
    ZeroDivisionError,
    UnicodeError,
    MemoryError,
]


@pytest.mark.parametrize("error", ERRORS)
def test_a_raising_sink_fails_one_attempt_and_never_shows_its_url(
    project: Project, monkeypatch: pytest.MonkeyPatch, error: type[Exception]
) -> None:
    monkeypatch.setenv("LOOPX_NOTIFY_FLUSH", "off")
    monkeypatch.setenv("LOOPX_NOW", "2026-11-29T12:00:00Z")
    add_sink(project.root, "boom://admin:S3cretpass@pager.example/T0KEN", T0)
    add_sink(project.root, "file://ok.jsonl", T0)
    assert queue_notice(project.root, events.blocked_health("g", None, "state broken", T0))
    report = flush(project.root, SinkKinds([Raising(error)]))
    assert len(report.delivered) == 1 and len(report.retrying) == 1
    [(_, record)] = list(outbox.records(project.root))
    assert record is not None
    failed = record.deliveries["s1"]
    assert failed.status == "pending" and failed.attempts == 1 and failed.last_error
    text = json.dumps(record.dump()) + json.dumps(report.to_json())
    assert "S3cretpass" not in text and "T0KEN" not in text
    assert len((project.root / "ok.jsonl").read_text().splitlines()) == 1


@pytest.mark.parametrize(
    "damage",
    ["sinks-garbage", "sinks-newer", "sinks-folder", "outbox-file", "record-garbage"],
)
def test_damaged_notice_files_never_fail_a_queue_or_a_tick(cli: Cli, project: Project, damage: str) -> None:
    notices = project.root / ".loopx/notices"
    notices.mkdir(parents=True)
    add_sink(project.root, "file://n.jsonl", T0)
    sinks = notices / "sinks.json"
    if damage == "sinks-garbage":
        sinks.write_text("{")
    elif damage == "sinks-newer":
        sinks.write_text('{"schema_version": 9}')
    elif damage == "sinks-folder":
        sinks.unlink()
        sinks.mkdir()
    elif damage == "outbox-file":
        (notices / "events").write_text("not a folder")
    else:
        (notices / "events").mkdir()
        (notices / "events/n-111111111111111111111111.json").write_text("{")
    cli.monkeypatch.setenv("LOOPX_NOTIFY_FLUSH", "off")
    for args in (["goal", "add", "-g", "g", "-o", "x"], ["agent", "register", "-a", "a"]):
        assert cli(*args).exit_code == 0
    opened = cli("gate", "open", "-g", "g", "--title", "t")
    assert opened.exit_code == 0 and opened.stderr == "", opened.stderr
    tick = cli("quota", "should-run", "-g", "g", "-a", "a")
    assert tick.exit_code == 0 and tick.stderr == "", tick.stderr
    flushed = cli("notify", "flush", "-f", "json")
    assert "Traceback" not in flushed.stdout + flushed.stderr
    assert flushed.exit_code in (0, 4, 8), flushed.stderr
    doctor = cli("doctor", "--check", "notices", "-f", "json")
    assert doctor.exit_code in (0, 9) and "Traceback" not in doctor.stderr, doctor.stderr
