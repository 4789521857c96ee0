"""The CLI end to end (in-process): every command group, formats, errors and exit codes."""

from __future__ import annotations

import json

import pytest

from loopx_core import __version__
from tests.conftest import Cli


@pytest.fixture
def demo(cli: Cli) -> Cli:
    assert cli("goal", "add", "-g", "demo", "-o", "Ship it", "--compute", "0.5").exit_code == 0
    assert cli("agent", "register", "-a", "builder", "-c", "python").exit_code == 0
    assert (
        cli("todo", "add", "-g", "demo", "--title", "Write parser", "-c", "python", "-p", "1").exit_code == 0
    )
    return cli


def test_version(cli: Cli) -> None:
    result = cli("--version")
    assert (result.exit_code, result.stdout.strip()) == (0, f"loopx {__version__}")


def test_init_twice_is_harmless(cli: Cli) -> None:
    result = cli("init", "-f", "json")
    assert result.json() == {"root": cli.root.name, "created": False}  # never a resolved path


def test_goal_lifecycle(demo: Cli) -> None:
    listed = demo("goal", "list", "-f", "json").json()
    assert [g["goal_id"] for g in listed["goals"]] == ["demo"]
    configured = demo("goal", "configure", "-g", "demo", "--compute", "0.25", "--window-hours", "12").json()
    assert configured["quota"]["compute"] == 0.25 and configured["quota"]["window_hours"] == 12
    assert demo("goal", "stop", "-g", "demo").json()["status"] == "stopped"
    packet = demo("quota", "should-run", "-g", "demo", "-a", "builder").json()
    assert packet["quota"]["state"] == "paused"
    assert demo("goal", "resume", "-g", "demo").json()["status"] == "active"
    shown = demo("goal", "show", "-g", "demo").json()
    assert shown["state"]["todos"][0]["title"] == "Write parser"
    assert "Write parser" in demo("goal", "show", "-g", "demo", "-f", "markdown").stdout


def test_todo_lease_lifecycle(demo: Cli) -> None:
    claimed = demo("todo", "claim", "-g", "demo", "-t", "t1", "-a", "builder").json()
    assert claimed["claimed_by"] == "builder" and claimed["status"] == "claimed"
    assert demo("todo", "release", "-g", "demo", "-t", "t1", "-a", "builder").json()["status"] == "open"
    demo("todo", "claim", "-g", "demo", "-t", "t1", "-a", "builder")
    spent = demo(
        "quota", "spend", "-g", "demo", "-a", "builder", "-t", "t1", "--manual", "--minutes", "3.1"
    ).json()
    assert spent["event"]["slots"] == 4 and spent["replayed"] is False
    done = demo("todo", "complete", "-g", "demo", "-t", "t1", "-a", "builder", "-e", "pytest green").json()
    assert done["status"] == "done" and done["evidence"] == ["pytest green"]
    table = demo("todo", "list", "-g", "demo", "-f", "markdown").stdout
    assert "| t1 | done |" in table
    demo("todo", "add", "-g", "demo", "--title", "Flaky")
    assert (
        demo("todo", "block", "-g", "demo", "-t", "t2", "--reason", "needs creds").json()["status"]
        == "blocked"
    )
    assert (
        demo("todo", "list", "-g", "demo", "--status", "blocked", "-f", "json").json()["todos"][0]["todo_id"]
        == "t2"
    )


def test_gate_and_focus(demo: Cli) -> None:
    demo("gate", "open", "-g", "demo", "--title", "Approve schema", "--gate-id", "schema")
    assert (
        demo("quota", "should-run", "-g", "demo", "-a", "builder").json()["quota"]["state"] == "operator_gate"
    )
    refused = demo("todo", "claim", "-g", "demo", "-t", "t1", "-a", "builder")
    assert refused.exit_code == 7 and "operator gate" in refused.stderr
    demo("gate", "resolve", "-g", "demo", "--gate-id", "schema", "--resolution", "approved")
    demo("focus", "wait", "-g", "demo", "--reason", "CI", "--for-minutes", "60", "--poll-every-minutes", "15")
    packet = demo("quota", "should-run", "-g", "demo", "-a", "builder", now="2026-11-29T12:20:00Z").json()
    assert packet["decision"] == "observe"
    demo("focus", "poll", "-g", "demo", "-a", "builder", now="2026-11-29T12:20:00Z")
    packet = demo("quota", "should-run", "-g", "demo", "-a", "builder", now="2026-11-29T12:21:00Z").json()
    assert (packet["decision"], packet["quota"]["next_eligible_at"]) == ("skip", "2026-11-29T12:35:00Z")
    demo("focus", "clear", "-g", "demo", "-e", "CI green")
    assert demo("quota", "should-run", "-g", "demo", "-a", "builder").json()["decision"] == "run"


def test_quota_status_spend_void(demo: Cli) -> None:
    demo("quota", "spend", "-g", "demo", "-a", "builder", "--manual", "--slots", "5")
    status = demo("quota", "status", "-g", "demo").json()
    assert (status["allowed_slots"], status["spent_slots"]) == (720, 5)
    voided = demo("quota", "void", "-g", "demo", "--event-id", "ev-1", "--reason", "test").json()
    assert voided["event"]["voids_event_id"] == "ev-1"
    assert demo("quota", "status", "-g", "demo").json()["spent_slots"] == 0
    assert "0/720 slots spent" in demo("quota", "status", "-g", "demo", "-f", "markdown").stdout


def test_status_sorted_by_attention(demo: Cli) -> None:
    demo("goal", "add", "-g", "paused-one", "-o", "x", "--compute", "0")
    demo("goal", "add", "-g", "gated", "-o", "x")
    demo("gate", "open", "-g", "gated", "--title", "Decide")
    rows = demo("status", "-f", "json").json()["goals"]
    assert [(r["goal_id"], r["state"]) for r in rows] == [
        ("gated", "operator_gate"),
        ("demo", "eligible"),
        ("paused-one", "paused"),
    ]
    assert "| gated | operator_gate | owner |" in demo("status", "-f", "markdown").stdout


def test_should_run_markdown(demo: Cli) -> None:
    text = demo("quota", "should-run", "-g", "demo", "-a", "builder", "-f", "markdown").stdout
    assert text.startswith("# should-run: RUN")
    assert (
        "1. `loopx turn begin --goal-id demo --agent-id builder --todo-id t1 --turn-instance-id ti-" in text
    )


@pytest.mark.parametrize(
    ("args", "code", "kind", "message"),
    [
        (["goal", "add", "-g", "Bad/Id", "-o", "x"], 2, "usage", "invalid goal id 'Bad/Id'"),
        (["goal", "show", "-g", "nope"], 3, "not_found", "goal 'nope' not found"),
        (["goal", "add", "-g", "demo", "-o", "again"], 5, "conflict", "already exists"),
        (
            ["goal", "configure", "-g", "demo", "--compute", "2"],
            2,
            "usage",
            "invalid --compute 2.0: must be a finite number >= 0 and <= 1",
        ),
        (["todo", "claim", "-g", "demo", "-t", "t9", "-a", "builder"], 3, "not_found", "todo 't9' not found"),
        (
            ["todo", "claim", "-g", "demo", "-t", "t1", "-a", "ghost"],
            3,
            "not_found",
            "agent 'ghost' is not registered",
        ),
        (
            ["todo", "add", "-g", "demo", "--title", "x", "--kind", "robot"],
            2,
            "usage",
            "unknown --kind 'robot'; known: agent, user",
        ),
        (["quota", "should-run", "-g", "demo", "-a", "ghost"], 3, "not_found", "agent 'ghost'"),
        (["quota", "void", "-g", "demo", "--event-id", "ev-9"], 3, "not_found", "ledger event 'ev-9'"),
        (
            ["focus", "wait", "-g", "demo", "--reason", "x", "--until", "yesterday"],
            2,
            "usage",
            "invalid --until 'yesterday'",
        ),
        (["todo", "release", "-g", "demo", "-t", "t1", "-a", "builder"], 5, "conflict", "not claimed by"),
    ],
)
def test_errors_are_one_line_with_exit_codes(
    demo: Cli, args: list[str], code: int, kind: str, message: str
) -> None:
    result = demo(*args, "-f", "json")
    assert result.exit_code == code
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stderr.startswith("loopx: error: ") and message in result.stderr
    assert json.loads(result.stdout)["error"] == {
        "code": kind,
        "message": result.stderr[14:].strip(),
        "exit_code": code,
    }


def test_error_in_markdown_mode_prints_nothing_on_stdout(demo: Cli) -> None:
    result = demo("goal", "show", "-g", "nope", "-f", "markdown")
    assert (result.exit_code, result.stdout) == (3, "")


def test_claim_conflict_exit_code(demo: Cli) -> None:
    demo("agent", "register", "-a", "other")
    assert demo("todo", "claim", "-g", "demo", "-t", "t1", "-a", "other").exit_code == 0
    result = demo("todo", "claim", "-g", "demo", "-t", "t1", "-a", "builder")
    assert result.exit_code == 5 and "is claimed by 'other'" in result.stderr
