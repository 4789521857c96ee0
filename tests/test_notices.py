"""Owner notices: queued once by a stable id, delivered to a real HTTP receiver and a JSON-lines
file, retried after a failure and delivered exactly once, never slowing the command that queued
them; sink kinds from plugins through the `loopx_register_notice_sinks` hook."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import ClassVar

import pytest

from loopx_core.errors import UsageError
from loopx_core.hosts import hookimpl
from loopx_core.hosts.manager import get_plugin_manager, notice_sinks
from loopx_core.notices import outbox
from loopx_core.notices.delivery import flush
from loopx_core.notices.sinks import NoticeSink, SinkKinds
from tests.conftest import T0_ISO, Cli, Project, run_loopx


class Receiver:
    """A tiny HTTP server on 127.0.0.1 that answers `codes` in turn (then 200) and keeps each body."""

    def __init__(self, codes: list[int] | None = None, delay: float = 0.0) -> None:
        self.codes = list(codes or [])
        self.delay = delay
        self.bodies: list[dict[str, object]] = []
        self.answered: list[int] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                time.sleep(receiver.delay)
                code = receiver.codes.pop(0) if receiver.codes else 200
                receiver.answered.append(code)
                if code == 200:
                    receiver.bodies.append(json.loads(body))
                self.send_response(code)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"json://127.0.0.1:{self.port}/hook"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


@pytest.fixture
def goal(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> Cli:
    """A goal and an agent; the detached flush is off, so each test flushes when it means to."""
    monkeypatch.setenv("LOOPX_NOTIFY_FLUSH", "off")
    for args in (
        ["goal", "add", "-g", "g", "-o", "Ship"],
        ["agent", "register", "-a", "a", "-c", "py"],
    ):
        assert cli(*args).exit_code == 0
    return cli


def flush_at(cli: Cli, seconds: float) -> dict[str, object]:
    from datetime import timedelta

    from tests.conftest import T0

    at = (T0 + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")
    result = cli("notify", "flush", "-f", "json", now=at)
    assert result.exit_code == 0, result.stderr
    return result.json()  # type: ignore[return-value]


def test_a_gate_reaches_a_real_http_receiver_once(goal: Cli, project: Project, receiver: Receiver) -> None:
    assert goal("notify", "add", receiver.url).exit_code == 0
    assert goal("gate", "open", "-g", "g", "--title", "Pick a licence").exit_code == 0
    first = flush_at(goal, 1)
    assert [d["kind"] for d in first["delivered"]] == ["gate_opened"]  # type: ignore[index]
    assert flush_at(goal, 60)["delivered"] == []
    [body] = receiver.bodies
    assert "Pick a licence" in str(body["message"]) and "gate-1" in str(body["title"])
    [(_, record)] = list(outbox.records(project.root))
    assert record is not None and record.deliveries["s1"].status == "delivered"
    assert f"notice: {record.notice.notice_id}" in str(body["message"])


def test_a_notice_shows_control_characters_as_escapes_and_keeps_them_as_data(
    goal: Cli, project: Project, receiver: Receiver
) -> None:
    """What a person reads (a phone, a terminal tailing ntfy) obeys no ESC, CSI or bidi override."""
    title = "evil\x1b[31mRED\x9b2J\u202eflip\x07"
    assert goal("notify", "add", receiver.url).exit_code == 0
    assert goal("gate", "open", "-g", "g", "--title", title).exit_code == 0
    assert [d["kind"] for d in flush_at(goal, 1)["delivered"]] == ["gate_opened"]  # type: ignore[index]
    [body] = receiver.bodies
    shown = f"{body['title']}\n{body['message']}"
    assert not any(c in shown for c in "\x1b\x9b\u202e\x07")
    assert "evil\\x1b[31mRED\\x9b2J\\u202eflip\\x07" in shown
    [(_, record)] = list(outbox.records(project.root))
    assert record is not None and title in record.notice.body  # the outbox keeps the text as given


def test_a_receiver_that_fails_then_recovers_gets_the_notice_exactly_once(
    goal: Cli, project: Project
) -> None:
    receiver = Receiver(codes=[500, 503])
    try:
        goal("notify", "add", receiver.url)
        goal("gate", "open", "-g", "g", "--title", "Deploy?")
        assert len(flush_at(goal, 0)["retrying"]) == 1  # type: ignore[arg-type]
        assert flush_at(goal, 2)["retrying"] == []  # not due yet: 5 s backoff
        assert len(flush_at(goal, 6)["retrying"]) == 1  # type: ignore[arg-type]  # second failure: 10 s more
        assert flush_at(goal, 10)["delivered"] == []
        assert len(flush_at(goal, 17)["delivered"]) == 1  # type: ignore[arg-type]
        assert flush_at(goal, 3600)["delivered"] == []
        assert receiver.answered == [500, 503, 200] and len(receiver.bodies) == 1
        [(_, record)] = list(outbox.records(project.root))
        assert record is not None and record.deliveries["s1"].attempts == 3
    finally:
        receiver.close()


def test_the_same_event_is_queued_once_and_a_file_sink_writes_one_line(goal: Cli, project: Project) -> None:
    goal("todo", "add", "-g", "g", "--title", "Needs rust", "-c", "rust")
    goal("notify", "add", "file://notices.jsonl", "--event", "ask_owner")
    for minute in range(3):  # three ticks see the same ask_owner: one notice
        at = f"2026-11-29T12:0{minute}:00Z"
        assert (
            goal("quota", "should-run", "-g", "g", "-a", "a", now=at).json()["effective_action"]
            == "ask_owner"
        )  # type: ignore[index]
    assert len(outbox.paths(project.root)) == 1
    flush_at(goal, 300)
    flush_at(goal, 900)
    lines = (project.root / "notices.jsonl").read_text().splitlines()
    assert [json.loads(line)["kind"] for line in lines] == ["ask_owner"]
    assert json.loads(lines[0])["subject"] == {"todo_id": "t1", "missing_capabilities": "rust"}


def test_filters_by_goal_and_event(goal: Cli, project: Project) -> None:
    goal("goal", "add", "-g", "other", "-o", "More")
    goal("notify", "add", "file://g.jsonl", "-g", "g")
    goal("notify", "add", "file://gates.jsonl", "-e", "gate_opened", "-e", "no_progress")
    goal("gate", "open", "-g", "other", "--title", "Other gate")
    goal("health", "add", "-g", "g", "--code", "disk", "-m", "disk full")
    goal("quota", "should-run", "-g", "g", "-a", "a")
    flush_at(goal, 1)
    assert [json.loads(x)["kind"] for x in (project.root / "g.jsonl").read_text().splitlines()] == [
        "blocked_health"
    ]
    assert [json.loads(x)["goal_id"] for x in (project.root / "gates.jsonl").read_text().splitlines()] == [
        "other"
    ]


def test_no_sink_means_nothing_is_written(goal: Cli, project: Project) -> None:
    goal("gate", "open", "-g", "g", "--title", "Anyone?")
    goal("quota", "should-run", "-g", "g", "-a", "a")
    assert not (project.root / ".loopx/notices").exists()


def test_credentials_are_never_printed(goal: Cli) -> None:
    secret = "hunter2-topsecret"
    for url in (
        f"json://bob:{secret}@127.0.0.1:9/x?token={secret}",
        f"ntfy://{secret}",
        f"mailto://bob:{secret}@example.com",
    ):
        added = goal("notify", "add", url, "-f", "json")
        assert added.exit_code == 0, added.stderr
        assert secret not in added.stdout + added.stderr
    outputs = [goal("notify", "list", "-f", f) for f in ("json", "markdown")]
    outputs.append(goal("notify", "test", "s1", "-f", "json"))
    assert outputs[-1].exit_code == 7  # nothing listens on port 9
    for out in outputs:
        assert secret not in out.stdout + out.stderr
    assert goal("notify", "list", "-f", "json").json()["sinks"][0]["url"] == "json://***@127.0.0.1:9/***?***"  # type: ignore[index]
    refused = goal("notify", "add", f"nosuchscheme://{secret}@host")
    assert refused.exit_code == 2 and secret not in refused.stderr


def test_notify_commands_refuse_in_one_line(goal: Cli) -> None:
    cases = [
        (["notify", "add", "file://x.jsonl", "-e", "nope"], 2),
        (["notify", "add", "not a url"], 2),
        (["notify", "add", "file://"], 2),
        (["notify", "remove", "s9"], 3),
        (["notify", "remove", "Bad/Id"], 2),
        (["notify", "test"], 3),
        (["notify", "flush", "--linger", "nan"], 2),
    ]
    for args, code in cases:
        result = goal(*args)
        assert result.exit_code == code, (args, result.stderr)
        assert result.stderr.startswith("loopx: error: ") and result.stderr.count("\n") == 1, result.stderr


def test_add_list_remove(goal: Cli) -> None:
    first = goal("notify", "add", "file://a.jsonl").json()
    again = goal("notify", "add", "file://a.jsonl").json()
    user = goal("notify", "add", "file://~/b.jsonl", "--user").json()
    assert first["sink_id"] == again["sink_id"] == "s1" and user["sink_id"] == "u1"  # type: ignore[index]
    assert [s["sink_id"] for s in goal("notify", "list", "-f", "json").json()["sinks"]] == ["s1", "u1"]  # type: ignore[index]
    assert goal("notify", "remove", "u1").exit_code == 0
    assert [s["url"] for s in goal("notify", "list", "-f", "json").json()["sinks"]] == ["file://a.jsonl"]  # type: ignore[index]
    assert (
        "| s1 | file://a.jsonl | all | all | 0 | 0 | 0 |" in goal("notify", "list", "-f", "markdown").stdout
    )


class ToySink(NoticeSink):
    """A plugin's sink kind: `toy://NAME` keeps notices in memory."""

    schemes = ("toy",)
    title = "Toy"
    sent: ClassVar[list[tuple[str, str]]] = []

    def send(self, url: str, notice, root: Path) -> None:  # type: ignore[no-untyped-def]
        if "broken" in url:
            raise RuntimeError("toy is broken")
        ToySink.sent.append((url, notice.kind))


def _plugin(*sinks: object) -> ModuleType:
    @hookimpl
    def loopx_register_notice_sinks(register):  # type: ignore[no-untyped-def]
        for sink in sinks:
            register(sink)

    plugin = ModuleType("toy_notices")
    plugin.loopx_register_notice_sinks = loopx_register_notice_sinks  # type: ignore[attr-defined]
    return plugin


def test_hook_loopx_register_notice_sinks(
    goal: Cli, project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    pm = get_plugin_manager(load_entrypoints=False, plugins=[("toy", _plugin(ToySink()))])
    kinds = SinkKinds(notice_sinks(pm))
    assert isinstance(kinds.for_url("toy://inbox"), ToySink)
    assert type(kinds.for_url("json://127.0.0.1/x")).__name__ == "AppriseSink"  # no kind claims it
    for bad in (object(), type("NoScheme", (NoticeSink,), {})()):
        with pytest.raises(UsageError):
            notice_sinks(get_plugin_manager(load_entrypoints=False, plugins=[("bad", _plugin(bad))]))
    with pytest.raises(UsageError, match="served twice"):
        SinkKinds([ToySink(), ToySink()])
    # delivered through the plugin's kind; a kind that raises is a failed attempt, not a crash
    from loopx_core.notices.config import add_sink
    from tests.conftest import T0

    add_sink(project.root, "toy://inbox", T0)
    add_sink(project.root, "toy://broken", T0)
    goal("gate", "open", "-g", "g", "--title", "Toy gate")
    ToySink.sent.clear()
    monkeypatch.setenv("LOOPX_NOW", T0_ISO)
    report = flush(project.root, kinds)
    assert ToySink.sent == [("toy://inbox", "gate_opened")]
    assert [r["error"] for r in report.retrying] == ["RuntimeError: toy is broken"]


def test_delivery_runs_out_of_the_commands_way(tmp_path: Path) -> None:
    """Real time, the detached flush: a slow sink does not slow `gate open`; the notice arrives."""
    slow = Receiver(delay=2.0)
    try:
        root = tmp_path / "p"
        root.mkdir()
        for args in (["init"], ["goal", "add", "-g", "g", "-o", "Ship"], ["notify", "add", slow.url]):
            assert run_loopx(*args, root=root, now=None).exit_code == 0
        started = time.monotonic()
        opened = run_loopx("gate", "open", "-g", "g", "--title", "Slow sink", root=root, now=None)
        took = time.monotonic() - started
        assert opened.exit_code == 0 and took < 1.5, took  # the 2 s sink is not waited for
        deadline = time.monotonic() + 20
        while not slow.bodies and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(slow.bodies) == 1
    finally:
        slow.close()


def test_queueing_costs_milliseconds(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process: queueing a notice for a dead sink (detached flush on) takes a few ms."""
    from loopx_core.notices import events
    from loopx_core.notices.config import add_sink
    from loopx_core.notices.emit import queue_notice
    from tests.conftest import T0

    add_sink(project.root, "json://127.0.0.1:9/dead", T0)
    monkeypatch.setenv("LOOPX_NOTIFY_FLUSH", "off")
    costs = []
    for n in range(20):
        notice = events.blocked_health("g", None, f"reason {n}", T0)
        started = time.perf_counter()
        assert queue_notice(project.root, notice)
        costs.append(time.perf_counter() - started)
    costs.sort()
    assert costs[10] < 0.02, costs  # median well under 20 ms


def test_a_lingering_flusher_never_holds_back_a_new_notice(
    goal: Cli, project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While one flusher waits out a broken sink's retry, a notice queued meanwhile is sent at
    once by its own flusher (the lock is held for a pass, never for the wait)."""
    from datetime import timedelta

    from loopx_core.notices.config import add_sink
    from tests.conftest import T0

    kinds = SinkKinds(
        notice_sinks(get_plugin_manager(load_entrypoints=False, plugins=[("toy", _plugin(ToySink()))]))
    )
    add_sink(project.root, "toy://broken", T0, events=["gate_opened"])
    goal("gate", "open", "-g", "g", "--title", "First")
    monkeypatch.delenv("LOOPX_NOW", raising=False)
    now = [T0]
    meanwhile: list[object] = []

    def sleep(seconds: float) -> None:
        if not meanwhile:  # the first wait: a healthy sink and a new notice arrive
            add_sink(project.root, "toy://inbox", T0, events=["gate_opened"])
            monkeypatch.setenv("LOOPX_NOW", T0_ISO)
            goal("gate", "open", "-g", "g", "--title", "Second")
            monkeypatch.delenv("LOOPX_NOW")
            ToySink.sent.clear()
            other = threading.Thread(
                target=lambda: meanwhile.append(flush(project.root, kinds, clock=lambda: now[0]))
            )
            other.start()  # another flusher, as another command's would be (the lock is per thread)
            other.join()
            assert ToySink.sent == [("toy://inbox", "gate_opened")]
        now[0] += timedelta(seconds=seconds)

    ToySink.sent.clear()
    first = flush(project.root, kinds, linger=30, clock=lambda: now[0], sleep=sleep)
    assert meanwhile and not meanwhile[0].busy  # type: ignore[attr-defined]
    assert first.retrying and not first.busy
