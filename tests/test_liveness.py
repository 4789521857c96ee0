"""Liveness: should-run records a heartbeat for an agent with a cadence; an agent silent for two
cadences is stalled, reported by `health list` and `doctor`, and its owner notified once per stall."""

from __future__ import annotations

import json

import pytest

from loopx_core.ops.health import heartbeat_path, liveness
from tests.conftest import Cli, Project


def at(minutes: int) -> str:
    return f"2026-11-29T{12 + minutes // 60:02d}:{minutes % 60:02d}:00Z"


@pytest.fixture
def loop(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> Cli:
    monkeypatch.setenv("LOOPX_NOTIFY_FLUSH", "off")
    for args in (
        ["goal", "add", "-g", "g", "-o", "Ship"],
        ["agent", "register", "-a", "ticker", "-c", "py", "--cadence-minutes", "10"],
        ["agent", "register", "-a", "manual", "-c", "py"],
        ["todo", "add", "-g", "g", "--title", "Write it"],
        ["notify", "add", "file://notices.jsonl", "-e", "stalled"],
    ):
        assert cli(*args).exit_code == 0
    return cli


def statuses(cli: Cli, now: str) -> dict[str, str]:
    rows = cli("health", "list", "-f", "json", now=now).json()["agents"]  # type: ignore[index]
    return {r["agent_id"]: r["status"] for r in rows}


def test_a_heartbeat_keeps_an_agent_live_and_silence_stalls_it(loop: Cli, project: Project) -> None:
    for minute in (0, 10, 20):
        assert loop("quota", "should-run", "-g", "g", "-a", "ticker", now=at(minute)).exit_code == 0
    assert json.loads(heartbeat_path(project.root, "ticker").read_text()) == {
        "schema_version": 1,
        "agent_id": "ticker",
    }
    from loopx_core.ops.health import last_beat

    assert last_beat(project.root, "ticker") == project.at(20)
    assert not heartbeat_path(project.root, "manual").exists()  # no cadence: no heartbeat kept
    assert statuses(loop, at(40)) == {"manual": "unjudged", "ticker": "live"}  # exactly two cadences
    assert statuses(loop, at(41)) == {"manual": "unjudged", "ticker": "stalled"}


def test_doctor_reports_a_stall_and_notifies_once(loop: Cli, project: Project) -> None:
    loop("quota", "should-run", "-g", "g", "-a", "ticker", now=at(0))
    for minute in (25, 35, 45):
        result = loop("doctor", "--check", "liveness", "-f", "json", now=at(minute))
        assert result.exit_code == 9
        [finding] = result.json()["findings"]  # type: ignore[index]
        assert finding["code"] == "agent_stalled" and finding["subject"]["agent_id"] == "ticker"
    loop("notify", "flush", now=at(50))
    lines = (project.root / "notices.jsonl").read_text().splitlines()
    assert [json.loads(x)["kind"] for x in lines] == ["stalled"]  # three looks, one notice
    loop("quota", "should-run", "-g", "g", "-a", "ticker", now=at(60))  # it comes back
    assert loop("doctor", "--check", "liveness", now=at(65)).exit_code == 0
    loop("doctor", "--check", "liveness", now=at(100))  # a second stall is a second notice
    loop("notify", "flush", now=at(101))
    assert len((project.root / "notices.jsonl").read_text().splitlines()) == 2


def test_every_sign_of_life_counts(loop: Cli, project: Project) -> None:
    loop(
        "quota",
        "scheduler-ack",
        "-g",
        "g",
        "-a",
        "manual",
        "--rrule",
        "FREQ=MINUTELY;INTERVAL=10",
        now=at(30),
    )
    loop("agent", "register", "-a", "manual", "-c", "py", "--cadence-minutes", "10", now=at(0))
    [row] = [r for r in liveness(project.store, project.at(45)) if r.agent_id == "manual"]
    assert (row.seen_by, row.status) == ("scheduler ack", "live")


def test_a_paused_heartbeat_or_an_ended_goal_is_not_a_stall(loop: Cli) -> None:
    loop("quota", "scheduler-ack", "-g", "g", "-a", "ticker", "--pause", now=at(0))
    assert statuses(loop, at(120))["ticker"] == "paused"
    loop("quota", "scheduler-ack", "-g", "g", "-a", "ticker", "--rrule", "FREQ=HOURLY", now=at(0))
    assert statuses(loop, at(120))["ticker"] == "stalled"
    loop("goal", "stop", "-g", "g")
    assert statuses(loop, at(120))["ticker"] == "paused"


def test_a_heartbeat_never_fails_a_tick(loop: Cli, project: Project) -> None:
    folder = project.root / ".loopx/heartbeats"
    folder.mkdir()
    (folder / "ticker.json").mkdir()  # a folder where the record goes
    result = loop("quota", "should-run", "-g", "g", "-a", "ticker")
    assert result.exit_code == 0 and result.stderr == ""


def test_an_agent_whose_every_goal_ended_is_not_stalled_while_others_go_on(loop: Cli) -> None:
    assert loop("goal", "add", "-g", "other", "-o", "Another loop").exit_code == 0
    loop("quota", "scheduler-ack", "-g", "g", "-a", "ticker", "--rrule", "FREQ=HOURLY", now=at(0))
    assert statuses(loop, at(120))["ticker"] == "stalled"  # its goal g is active
    loop("goal", "stop", "-g", "g")
    assert statuses(loop, at(120))["ticker"] == "paused"  # `other` goes on, but ticker never worked there
    loop("quota", "scheduler-ack", "-g", "other", "-a", "ticker", "--rrule", "FREQ=HOURLY", now=at(0))
    assert statuses(loop, at(120))["ticker"] == "stalled"  # now it does
