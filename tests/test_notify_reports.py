"""`loopx notify flush` and `loopx notify list` report what the outbox holds, in every format.

A flush's Markdown names each delivery it will retry and each it gave up on (with the
sink's one-line error), and its counts are the JSON report's; a flush while another holds
the outbox says so and delivers nothing; a flush where no `.loopx/` exists is exit 3 and
creates nothing. `notify list` counts each sink's deliveries by status across the outbox
(a damaged record counts for nothing and does not fail the listing).
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from loopx_core.errors import ExitCode
from loopx_core.notices import events, outbox
from loopx_core.notices.delivery import MAX_ATTEMPTS
from loopx_core.notices.emit import queue_notice
from loopx_core.store.lock import file_lock
from tests.conftest import T0, Cli, Project, run_loopx


def iso(moment: datetime) -> str:
    """An ISO time for LOOPX_NOW."""
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture
def queued(cli: Cli, project: Project, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Two notices queued for a working sink (s1) and a failing one (s2), a damaged record beside."""
    monkeypatch.setenv("LOOPX_NOTIFY_FLUSH", "off")
    (project.root / "afile").write_text("a file where the sink's folder goes")
    for url in ("file://ok.jsonl", "file://afile/n.jsonl"):
        assert cli("notify", "add", url).exit_code == 0
    notices = [events.blocked_health(goal, None, "state broken", T0) for goal in ("g", "h")]
    for notice in notices:
        assert queue_notice(project.root, notice, spawn=False)
    (outbox.events_dir(project.root) / "n-000000000000000000000000.json").write_text("{")
    return [notice.notice_id for notice in notices]


def counts(cli: Cli) -> dict[str, tuple[int, int, int]]:
    """`notify list`'s (delivered, pending, failed) by sink."""
    listed = cli("notify", "list", "-f", "json")
    assert listed.exit_code == 0, listed.stderr
    return {s["sink_id"]: (s["delivered"], s["pending"], s["failed"]) for s in listed.json()["sinks"]}  # type: ignore[index]


def test_flush_reports_retries_then_give_ups_and_list_counts_them(
    cli: Cli, project: Project, queued: list[str]
) -> None:
    error = "cannot append to n.jsonl: Not a directory"
    assert counts(cli) == {"s1": (0, 2, 0), "s2": (0, 2, 0)}
    first = cli("notify", "flush", "-f", "markdown", now=iso(T0))
    assert first.exit_code == 0, first.stderr
    lines = first.stdout.splitlines()
    assert lines[0] == "Delivered 2; retrying 2; gave up 0; pending 2."
    assert sorted(lines[1:]) == sorted(f"- retry s2 {notice_id}: {error}" for notice_id in queued)
    assert counts(cli) == {"s1": (2, 0, 0), "s2": (0, 2, 0)}
    report: dict[str, object] = {}
    for attempt in range(2, MAX_ATTEMPTS + 1):
        result = cli("notify", "flush", "-f", "json", now=iso(T0 + timedelta(hours=2 * attempt)))
        assert result.exit_code == 0, result.stderr
        report = json.loads(result.stdout)
    assert report["retrying"] == [] and report["pending"] == 0
    assert sorted(r["notice_id"] for r in report["gave_up"]) == sorted(queued)  # type: ignore[attr-defined]
    assert counts(cli) == {"s1": (2, 0, 0), "s2": (0, 0, 2)}
    assert len((project.root / "ok.jsonl").read_text().splitlines()) == 2


def test_the_last_flush_in_markdown_names_what_it_gave_up(
    cli: Cli, project: Project, queued: list[str]
) -> None:
    for attempt in range(1, MAX_ATTEMPTS):
        assert cli("notify", "flush", "-f", "json", now=iso(T0 + timedelta(hours=2 * attempt))).exit_code == 0
    last = cli("notify", "flush", "-f", "markdown", now=iso(T0 + timedelta(days=2)))
    assert last.exit_code == 0, last.stderr
    lines = last.stdout.splitlines()
    assert lines[0] == "Delivered 0; retrying 0; gave up 2; pending 0."
    assert sorted(lines[1:]) == sorted(
        f"- gave up s2 {notice_id}: cannot append to n.jsonl: Not a directory" for notice_id in queued
    )


def test_a_flush_while_another_holds_the_outbox_delivers_nothing(project: Project, queued: list[str]) -> None:
    with file_lock(outbox.lock_file(project.root), timeout=5):
        busy = run_loopx("notify", "flush", "-f", "markdown", root=project.root)
        as_json = run_loopx("notify", "flush", "-f", "json", root=project.root)
    assert busy.exit_code == as_json.exit_code == 0, busy.stderr + as_json.stderr
    assert busy.stdout == "Another flush is delivering the notices.\n"
    assert json.loads(as_json.stdout)["busy"] is True
    assert not (project.root / "ok.jsonl").exists()


def test_a_flush_without_state_is_not_found_and_creates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "bare").mkdir()
    result = Cli(tmp_path / "bare", monkeypatch)("notify", "flush", "-f", "markdown")
    assert result.exit_code == ExitCode.NOT_FOUND
    assert (
        result.stderr
        == "loopx: error: no LoopX state here: run `loopx init` in the project first, or pass --root\n"
    )
    assert list((tmp_path / "bare").iterdir()) == []
