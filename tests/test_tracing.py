"""Turns as OpenTelemetry traces, received over real OTLP/HTTP (protobuf decoded with
opentelemetry-proto): one trace per turn across processes, parent links, `loopx.*` attributes,
the typed error as span status, `TRACEPARENT` for the host; a collector that is down or slow
costs a bounded wait and one warning line; off, nothing of OpenTelemetry is imported."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.builders import build_project, run_once_words
from tests.conftest import CliResult, run_loopx
from tests.otlp import Receiver, Span, receiving

SUBJECT = {"loopx.goal_id", "loopx.agent_id", "loopx.todo_id", "loopx.turn_key"}


def _traced(receiver: Receiver) -> dict[str, str]:
    return {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, "OTEL_SERVICE_NAME": "loopx-test"}


def _loopx(root: Path, *args: str, env: dict[str, str] | None = None) -> CliResult:
    return run_loopx(*args, "-f", "json", root=root, env=env, now=None)


def _one_trace(spans: list[Span]) -> tuple[Span, list[Span]]:
    """The root span and its children; every span in the one trace, every child under the root."""
    roots = [s for s in spans if s.name == "loopx.turn"]
    assert len(roots) == 1, [s.name for s in spans]
    root = roots[0]
    assert root.parent_span_id == ""
    children = [s for s in spans if s is not root]
    assert {s.trace_id for s in spans} == {root.trace_id}
    assert {s.parent_span_id for s in children} == {root.span_id}
    assert {s.service for s in spans} == {"loopx-test"}
    return root, children


def test_run_once_is_one_trace(tmp_path: Path, snapshot_json) -> None:  # type: ignore[no-untyped-def]
    root_dir = tmp_path / "p"
    build_project(root_dir)
    seen = tmp_path / "traceparent"
    host = f'printf %s "$TRACEPARENT" > {shlex.quote(str(seen))}'
    with receiving() as receiver:
        done = _loopx(
            root_dir, *run_once_words(host), env=_traced(receiver),
        )  # fmt: skip
        assert done.exit_code == 0, done.stderr
        receiver.wait_for("loopx.turn")
        spans = list(receiver.spans)
    root, children = _one_trace(spans)
    packet = done.json()
    assert isinstance(packet, dict)
    journal = json.loads((root_dir / ".loopx/goals/g/turns" / f"{packet['turn_key'][7:]}.json").read_text())
    assert journal["trace_parent"] == f"00-{root.trace_id}-{root.span_id}-01"
    host_span = next(s for s in children if s.name == "loopx.host_command")
    assert seen.read_text() == f"00-{root.trace_id}-{host_span.span_id}-01"  # the host joins the trace
    assert host_span.attributes["loopx.exit_code"] == 0
    assert root.attributes["loopx.status"] == "committed" and root.status == 0
    for span in spans:
        assert set(span.attributes) >= SUBJECT, span.name
        assert span.attributes["loopx.turn_key"] == packet["turn_key"]
    spend = next(s for s in children if s.name == "loopx.spend")
    assert spend.attributes["loopx.receipt_id"]
    history = _loopx(root_dir, "history").json()
    assert history["runs"][0]["trace_id"] == root.trace_id  # type: ignore[index]
    assert {s.name: sorted(s.attributes) for s in sorted(spans, key=lambda s: s.name)} == snapshot_json


def test_a_turn_settled_by_separate_commands_is_one_trace(tmp_path: Path) -> None:
    """begin, writeback and spend: three processes, one trace, the root sent when spend commits."""
    root_dir = tmp_path / "p"
    build_project(root_dir)
    with receiving() as receiver:
        env = _traced(receiver)
        begun = _loopx(root_dir, "turn", "begin", "-g", "g", "-a", "builder", "-t", "t1", env=env)
        assert begun.exit_code == 0, begun.stderr
        key = begun.json()["turn_key"]  # type: ignore[index]
        early = _loopx(root_dir, "turn", "spend", "-g", "g", "-a", "builder", "--turn-key", key, env=env)
        assert early.exit_code != 0  # spend before writeback: a typed refusal, traced as such
        wrote = _loopx(
            root_dir, "writeback", "-g", "g", "-a", "builder", "--turn-key", key,
            "--summary", "done", "--validation-status", "passed", "--evidence", "ok", env=env,
        )  # fmt: skip
        assert wrote.exit_code == 0, wrote.stderr
        spent = _loopx(root_dir, "turn", "spend", "-g", "g", "-a", "builder", "--turn-key", key, env=env)
        assert spent.exit_code == 0, spent.stderr
        receiver.wait_for("loopx.turn")
        receiver.wait_for("loopx.spend", 2)
        spans = list(receiver.spans)
    _, children = _one_trace(spans)
    names = sorted(s.name for s in children)
    assert names == sorted(
        ["loopx.turn.begin", "loopx.spend", "loopx.validation", "loopx.writeback", "loopx.spend"]
    )
    refused = [s for s in children if s.name == "loopx.spend" and s.status == 2]
    assert len(refused) == 1 and refused[0].attributes["loopx.error_code"] == "writeback_missing"
    assert refused[0].status_message == "writeback_missing"


def test_a_cancelled_turn_ends_its_trace_as_stopped(tmp_path: Path) -> None:
    root_dir = tmp_path / "p"
    build_project(root_dir)
    with receiving() as receiver:
        env = _traced(receiver)
        key = _loopx(root_dir, "turn", "begin", "-g", "g", "-a", "builder", "-t", "t1", env=env).json()[
            "turn_key"
        ]  # type: ignore[index]
        cancel = _loopx(root_dir, "turn", "cancel", "-g", "g", "-a", "builder", "--turn-key", key, env=env)
        assert cancel.exit_code == 0, cancel.stderr
        root = receiver.wait_for("loopx.turn")[0]
    assert root.status == 2 and root.attributes["loopx.status"] == "stopped"


@pytest.mark.parametrize("collector", ["down", "slow"])
def test_a_collector_that_does_not_take_spans_costs_a_bounded_wait_and_one_line(
    tmp_path: Path, collector: str
) -> None:
    root_dir = tmp_path / "p"
    build_project(root_dir)
    args = (*run_once_words(),)
    if collector == "down":
        env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"}  # the discard port: nothing listens
        start = time.monotonic()
        done = _loopx(root_dir, *args, env=env)
        took = time.monotonic() - start
    else:
        with receiving(delay_s=20) as receiver:
            start = time.monotonic()
            done = _loopx(root_dir, *args, env=_traced(receiver))
            took = time.monotonic() - start
    assert done.exit_code == 0, done.stderr
    assert done.json()["status"] == "committed"  # type: ignore[index]
    warnings = [line for line in done.stderr.splitlines() if line.startswith("loopx: warning: traces")]
    assert len(warnings) == 1, done.stderr
    assert "Traceback" not in done.stderr and str(tmp_path) not in done.stderr
    assert took < 15, took  # bounded: one export's timeout and the exit flush, not the SDK's retries


def _imported(root: Path, env: dict[str, str]) -> set[str]:
    """The top-level packages a real `loopx turn run-once` imports."""
    loopx = Path(sys.executable).parent / "loopx"
    full = {**os.environ, **env, "LOOPX_ROOT": str(root)}
    full.pop("LOOPX_NOW", None)
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", str(loopx), *run_once_words(), "-f", "json"],
        env=full, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    return {line.split("|")[-1].strip().split(".")[0] for line in proc.stderr.splitlines() if "|" in line}


def test_off_nothing_of_opentelemetry_is_imported(tmp_path: Path) -> None:
    build_project(tmp_path / "off", todo_count=1)
    assert "opentelemetry" not in _imported(tmp_path / "off", {})
    disabled = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9", "OTEL_SDK_DISABLED": "true"}
    build_project(tmp_path / "disabled", todo_count=1)
    assert "opentelemetry" not in _imported(tmp_path / "disabled", disabled)
    with receiving() as receiver:
        build_project(tmp_path / "on", todo_count=1)
        assert "opentelemetry" in _imported(tmp_path / "on", _traced(receiver))  # the check bites


def test_the_goal_page_links_a_traced_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from loopx_core.dashboard.views import trace_url
    from loopx_core.store.files import FileStore
    from tests.browser import request, served_thread

    root_dir = tmp_path / "p"
    build_project(root_dir)
    with receiving() as receiver:
        done = _loopx(
            root_dir, *run_once_words(), env=_traced(receiver),
        )  # fmt: skip
        trace = receiver.wait_for("loopx.turn")[0].trace_id
    assert done.exit_code == 0
    monkeypatch.setenv("LOOPX_TRACE_URL", "https://jaeger.example/trace/{trace_id}")
    with served_thread(FileStore(root_dir)) as served:
        page = request(served, "GET", "/goals/g")
    assert f'href="https://jaeger.example/trace/{trace}"' in page.body
    for template in ("javascript:alert(1)//{trace_id}", "https://x.example/", ""):
        monkeypatch.setenv("LOOPX_TRACE_URL", template)
        assert trace_url(trace) is None


@pytest.mark.parametrize(
    "endpoint",
    [
        "http://127.0.0.1:99999",
        "http://127.0.0.1:abc",
        "user:s3cret@collector.example:4318",
        "http://127.0.0.1:9/v1/traces?k=s3cret",
    ],
)
def test_a_bad_or_secret_endpoint_is_one_line_naming_no_secret(tmp_path: Path, endpoint: str) -> None:
    root_dir = tmp_path / "p"
    build_project(root_dir)
    done = _loopx(
        root_dir, *run_once_words(), env={"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": endpoint},
    )  # fmt: skip
    assert done.exit_code == 0, done.stderr
    assert "Traceback" not in done.stderr and "s3cret" not in done.stderr
    assert len([line for line in done.stderr.splitlines() if line.startswith("loopx: warning: traces")]) == 1


def test_a_long_exporter_timeout_still_ends_within_the_flush_bound(tmp_path: Path) -> None:
    root_dir = tmp_path / "p"
    build_project(root_dir)
    with receiving(delay_s=60) as receiver:
        env = {**_traced(receiver), "OTEL_EXPORTER_OTLP_TIMEOUT": "100000"}
        start = time.monotonic()
        done = _loopx(
            root_dir, *run_once_words(), env=env,
        )  # fmt: skip
        took = time.monotonic() - start
    assert done.exit_code == 0 and took < 12, (took, done.stderr)
    assert "not sent within 3 s" in done.stderr


def test_settings_the_sdk_warns_about_are_no_export_failure(tmp_path: Path) -> None:
    root_dir = tmp_path / "p"
    build_project(root_dir)
    with receiving() as receiver:
        env = {**_traced(receiver), "OTEL_EXPORTER_OTLP_TIMEOUT": "abc"}
        done = _loopx(
            root_dir, *run_once_words(), env=env,
        )  # fmt: skip
        receiver.wait_for("loopx.turn")
    assert done.exit_code == 0 and "warning" not in done.stderr, done.stderr


def test_two_racing_spends_send_one_root(tmp_path: Path) -> None:
    root_dir = tmp_path / "p"
    build_project(root_dir)
    loopx = str(Path(sys.executable).parent / "loopx")
    with receiving() as receiver:
        env = _traced(receiver)
        key = _loopx(root_dir, "turn", "begin", "-g", "g", "-a", "builder", "-t", "t1", env=env).json()[
            "turn_key"
        ]  # type: ignore[index]
        wrote = _loopx(
            root_dir, "writeback", "-g", "g", "-a", "builder", "--turn-key", key,
            "--summary", "done", "--validation-status", "passed", "--evidence", "ok", env=env,
        )  # fmt: skip
        assert wrote.exit_code == 0
        full = {**os.environ, **env, "LOOPX_ROOT": str(root_dir)}
        full.pop("LOOPX_NOW", None)
        argv = [loopx, "turn", "spend", "-g", "g", "-a", "builder", "--turn-key", key, "-f", "json"]
        racers = [
            subprocess.Popen(argv, env=full, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            for _ in range(4)
        ]
        codes = [p.wait(timeout=60) for p in racers]
        assert codes.count(0) >= 1
        receiver.wait_for("loopx.spend", 4)
        roots = [s for s in receiver.spans if s.name == "loopx.turn"]
    assert len(roots) == 1, [s.name for s in receiver.spans]


def test_a_failed_validation_marks_its_span(tmp_path: Path) -> None:
    root_dir = tmp_path / "p"
    build_project(root_dir)
    with receiving() as receiver:
        done = _loopx(
            root_dir, *run_once_words("true", "false"), env=_traced(receiver),
        )  # fmt: skip
        assert done.exit_code == 14, done.stderr
        span = receiver.wait_for("loopx.validation_command")[0]
    assert span.status == 2 and span.attributes["loopx.error_code"] == "writeback_rejected"
    assert span.attributes["loopx.exit_code"] == 1


def test_a_journal_with_zero_ids_is_untraced(tmp_path: Path) -> None:
    root_dir = tmp_path / "p"
    build_project(root_dir)
    with receiving() as receiver:
        env = _traced(receiver)
        key = _loopx(root_dir, "turn", "begin", "-g", "g", "-a", "builder", "-t", "t1", env=env).json()[
            "turn_key"
        ]  # type: ignore[index]
        path = root_dir / ".loopx/goals/g/turns" / f"{key[7:]}.json"
        journal = json.loads(path.read_text())
        journal["trace_parent"] = f"00-{'0' * 32}-{'0' * 16}-01"
        path.write_text(json.dumps(journal))
        for args in (
            ("writeback", "--summary", "done", "--validation-status", "passed", "--evidence", "ok"),
            ("turn", "spend"),
        ):
            out = _loopx(root_dir, *args, "-g", "g", "-a", "builder", "--turn-key", key, env=env)
            assert out.exit_code == 0, out.stderr
        time.sleep(0.5)
        assert [s.name for s in receiver.spans] == ["loopx.turn.begin"]
    assert _loopx(root_dir, "history").json()["runs"][0]["trace_id"] is None  # type: ignore[index]


HEX = "0123456789abcdef"


@given(st.text(max_size=80))
def test_valid_never_raises(parent: str) -> None:
    from loopx_core.tracing import valid

    assert valid(parent) in (True, False)


@given(st.text(HEX, min_size=32, max_size=32), st.text(HEX, min_size=16, max_size=16))
def test_valid_is_nonzero_ids(trace: str, span: str) -> None:
    from loopx_core.tracing import valid

    assert valid(f"00-{trace}-{span}-01") == (int(trace, 16) != 0 and int(span, 16) != 0)
    assert valid(f"00-{'0' * 32}-{span}-01") is False and valid(f"00-{trace}-{'0' * 16}-01") is False
