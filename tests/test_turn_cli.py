"""The CLI adapter: every typed refusal reachable, each with its own exit code and kind."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Cli

FAILURE_EXIT = {
    "invalid_identity": 10,
    "receipt_missing": 11,
    "identity_mismatch": 12,
    "writeback_missing": 13,
    "writeback_rejected": 14,
    "budget_rejected": 15,
    "permission_denied": 16,
    "cancelled": 17,
    "closeout_rejected": 18,
}


@pytest.fixture
def turn(cli: Cli) -> tuple[Cli, str]:
    cli("goal", "add", "-g", "g", "-o", "Objective", "--compute", "0.01")  # 14 slots per day
    cli("agent", "register", "-a", "builder")
    cli("agent", "register", "-a", "other")
    cli("todo", "add", "-g", "g", "--title", "First")
    cli("todo", "add", "-g", "g", "--title", "Second")
    begun = cli("turn", "begin", "-g", "g", "-a", "builder", "-t", "t1")
    assert begun.exit_code == 0, begun.stderr
    return cli, begun.json()["turn_key"]


def writeback(cli: Cli, key: str, *extra: str) -> object:
    return cli(
        "writeback",
        "-g",
        "g",
        "-a",
        "builder",
        "-k",
        key,
        "-s",
        "done",
        "--validation-status",
        "passed",
        *extra,
    )


def refusal(result, kind: str) -> None:  # type: ignore[no-untyped-def]
    assert result.exit_code == FAILURE_EXIT[kind], (result.exit_code, result.stderr)
    assert result.stderr.count("\n") == 1 and f"loopx: error: {kind}: " in result.stderr
    error = json.loads(result.stdout)["error"]
    assert (error["code"], error["exit_code"]) == (kind, FAILURE_EXIT[kind])


def test_invalid_identity(cli: Cli) -> None:
    cli("goal", "add", "-g", "g", "-o", "x")
    cli("agent", "register", "-a", "builder")
    cli("todo", "add", "-g", "g", "--title", "First")
    refusal(cli("turn", "begin", "-g", "g", "-a", "builder", "-t", "t1", "--replan"), "invalid_identity")
    refusal(cli("turn", "begin", "-g", "g", "-a", "builder"), "invalid_identity")


def test_writeback_missing(turn: tuple[Cli, str]) -> None:
    cli, key = turn
    refusal(cli("quota", "spend", "-g", "g", "-a", "builder", "-k", key), "writeback_missing")


def test_writeback_rejected_writes_nothing(turn: tuple[Cli, str]) -> None:
    cli, key = turn
    refusal(
        cli("writeback", "-g", "g", "-a", "builder", "-k", key, "-s", "x", "--validation-status", "failed"),
        "writeback_rejected",
    )
    refusal(
        cli("writeback", "-g", "g", "-a", "builder", "-k", key, "-s", "x", "--validation-command", "exit 3"),
        "writeback_rejected",
    )
    assert not (cli.root / ".loopx/goals/g/runs").exists()


def test_identity_mismatch(turn: tuple[Cli, str]) -> None:
    cli, key = turn
    assert writeback(cli, key).exit_code == 0
    refusal(cli("quota", "spend", "-g", "g", "-a", "builder", "-k", key, "-t", "t2"), "identity_mismatch")
    refusal(cli("turn", "begin", "-g", "g", "-a", "builder", "-t", "t2"), "identity_mismatch")


def test_permission_denied(turn: tuple[Cli, str]) -> None:
    cli, key = turn
    assert writeback(cli, key).exit_code == 0
    refusal(cli("quota", "spend", "-g", "g", "-a", "other", "-k", key), "permission_denied")
    refusal(cli("turn", "cancel", "-g", "g", "-a", "other", "-k", key), "permission_denied")


def test_budget_rejected(turn: tuple[Cli, str]) -> None:
    cli, key = turn
    assert writeback(cli, key).exit_code == 0
    cli("quota", "spend", "-g", "g", "-a", "other", "--manual", "--slots", "14")
    refusal(cli("quota", "spend", "-g", "g", "-a", "builder", "-k", key), "budget_rejected")
    refusal(cli("turn", "begin", "-g", "g", "-a", "other", "-t", "t2"), "budget_rejected")


def test_cancelled(turn: tuple[Cli, str]) -> None:
    cli, key = turn
    stopped = cli("turn", "cancel", "-g", "g", "-a", "builder", "-k", key, "--reason", "wrong approach")
    assert stopped.json()["status"] == "stopped"
    refusal(writeback(cli, key), "cancelled")  # type: ignore[arg-type]
    refusal(cli("quota", "spend", "-g", "g", "-a", "builder", "-k", key), "cancelled")
    todo = cli("goal", "show", "-g", "g").json()["state"]["todos"][0]
    assert (todo["status"], todo.get("claimed_by")) == ("open", None)


def test_receipt_missing_and_closeout_rejected(turn: tuple[Cli, str]) -> None:
    cli, key = turn
    closeout = ("todo", "complete", "-g", "g", "-t", "t1", "-a", "builder", "-k", key, "--no-follow-up")
    refusal(cli(*closeout), "receipt_missing")
    assert writeback(cli, key).exit_code == 0
    refusal(cli(*closeout), "receipt_missing")
    assert cli("quota", "spend", "-g", "g", "-a", "builder", "-k", key).exit_code == 0
    refusal(cli(*closeout), "closeout_rejected")
    cli("todo", "block", "-g", "g", "-t", "t2", "--reason", "out of scope")
    done = cli(*closeout)
    assert done.exit_code == 0 and done.json()["status"] == "committed"
    assert cli("goal", "show", "-g", "g").json()["goal"]["status"] == "done"
    packet = cli("quota", "should-run", "-g", "g", "-a", "builder").json()
    assert (packet["quota"]["state"], packet["reason"]) == ("paused", "goal is done (terminal closeout)")


def test_all_kinds_are_distinguishable() -> None:
    assert len(set(FAILURE_EXIT.values())) == len(FAILURE_EXIT) == 9


def test_full_turn_and_replays_change_nothing(turn: tuple[Cli, str]) -> None:
    cli, key = turn
    assert cli("turn", "begin", "-g", "g", "-a", "builder", "-t", "t1").json()["replayed"] is True
    first = writeback(cli, key, "-e", "pytest ok", "--changed-file", "src/a.py").json()  # type: ignore[attr-defined]
    assert first["effects"] == [f"writeback:run-{key[7:23]}"] and first["next_phase"] == "quota_spend"
    runs = cli.root / ".loopx/goals/g/runs"
    before = {p.name: p.read_bytes() for p in runs.iterdir()}
    again = writeback(cli, key, "-e", "different").json()  # type: ignore[attr-defined]
    assert again["effects"] == [] and all(r["replayed"] for r in again["receipts"])
    assert {p.name: p.read_bytes() for p in runs.iterdir()} == before
    spent = cli("quota", "spend", "-g", "g", "-a", "builder", "-k", key, now="2026-11-29T12:04:30Z").json()
    assert spent["status"] == "committed" and spent["receipts"][0]["detail"]["slots"] == 5
    ledger = (cli.root / ".loopx/goals/g/events.jsonl").read_bytes()
    assert cli("quota", "spend", "-g", "g", "-a", "builder", "-k", key).json()["effects"] == []
    assert (cli.root / ".loopx/goals/g/events.jsonl").read_bytes() == ledger
    record = json.loads((runs / f"run-{key[7:23]}.json").read_text())
    assert record["summary"] == "done" and record["changed_files"] == ["src/a.py"]
    assert "# run-" in (runs / f"run-{key[7:23]}.md").read_text()
    index = (runs / "index.jsonl").read_text().splitlines()
    assert len(index) == 1 and json.loads(index[0])["turn_key"] == key


def test_should_run_resumes_an_open_turn(turn: tuple[Cli, str]) -> None:
    cli, key = turn
    packet = cli("quota", "should-run", "-g", "g", "-a", "builder").json()
    assert packet["effective_action"] == "resume_turn" and packet["settlement_plan"]["turn_key"] == key
    assert packet["interaction_contract"]["cli_channel"]["next_cli_actions"][0].startswith("loopx writeback")
    writeback(cli, key)
    packet = cli("quota", "should-run", "-g", "g", "-a", "builder").json()
    assert packet["interaction_contract"]["cli_channel"]["next_cli_actions"] == [
        f"loopx quota spend --goal-id g --agent-id builder --turn-key {key}",
        "loopx todo complete --goal-id g --todo-id t1 --agent-id builder --evidence '<evidence>'",
    ]


def test_should_run_packet_drives_a_whole_turn(cli: Cli) -> None:
    """Run exactly the packet's next actions (placeholders filled): the todo is done, charged once."""
    cli("goal", "add", "-g", "g", "-o", "x")
    cli("agent", "register", "-a", "builder")
    cli("todo", "add", "-g", "g", "--title", "Only")
    import shlex

    actions = cli("quota", "should-run", "-g", "g", "-a", "builder").json()["interaction_contract"][
        "cli_channel"
    ]["next_cli_actions"]
    assert [a.split()[1] for a in actions] == ["turn", "writeback", "quota", "todo"]
    for action in actions:
        words = [w.replace("<summary>", "done").replace("<evidence>", "ok") for w in shlex.split(action)[1:]]
        assert cli(*words).exit_code == 0, action
    state = cli("goal", "show", "-g", "g").json()["state"]
    assert state["todos"][0]["status"] == "done" and state["open_turns"] == {}
    assert len((cli.root / ".loopx/goals/g/events.jsonl").read_text().splitlines()) == 1
