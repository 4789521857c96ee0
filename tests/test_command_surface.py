"""One command surface: `--surface` for hosts (old `--host` hidden), the settlement verbs under
`loopx turn` (old spellings still work), list / show / archive or remove for goals, agents, todos."""

from __future__ import annotations

import re

import pytest

from tests.conftest import Cli


@pytest.fixture
def busy(cli: Cli) -> Cli:
    assert cli("goal", "add", "-g", "g", "-o", "x", "-f", "json").exit_code == 0
    assert cli("agent", "register", "-a", "builder", "-c", "python", "-f", "json").exit_code == 0
    assert cli("todo", "add", "-g", "g", "--title", "one", "-f", "json").exit_code == 0
    return cli


def test_surface_and_its_hidden_old_name(busy: Cli) -> None:
    new = busy("agent", "register", "-a", "a1", "--surface", "codex-app", "-f", "json").json()
    old = busy("agent", "register", "-a", "a2", "--host", "codex-app", "-f", "json").json()
    assert new["host"] == old["host"] == "codex-app"  # type: ignore[index]
    helped = busy("agent", "register", "--help").stdout
    assert "`--host` is the old name of `--surface`" in helped  # documented ...
    assert not re.search(r"^\s+--host\b", helped, re.M)  # ... but not listed as an option
    both = busy("agent", "register", "-a", "a3", "--surface", "dsh", "--host", "codex-app")
    assert both.exit_code == 2 and "old name of --surface" in both.stderr


def test_hook_help_points_to_a_command_that_exists(busy: Cli) -> None:
    assert "see `loopx hooks`" in busy("hook", "--help").stdout
    listed = busy("hooks", "-f", "json").json()["hooks"]  # type: ignore[index]
    assert {"event": "claude-stop", "host": "claude-code"} in listed


def settled_turn(cli: Cli) -> str:
    begun = cli("turn", "begin", "-g", "g", "-a", "builder", "-t", "t1", "-f", "json").json()
    key = begun["turn_key"]  # type: ignore[index]
    wrote = cli(
        "turn",
        "writeback",
        "-g",
        "g",
        "-a",
        "builder",
        "-k",
        key,
        "-s",
        "did it",
        "--validation-status",
        "passed",
    )
    assert wrote.exit_code == 0, wrote.stderr
    return key  # type: ignore[no-any-return]


def test_settlement_verbs_under_turn_and_their_old_spellings(busy: Cli) -> None:
    key = settled_turn(busy)
    spent = busy("turn", "spend", "-g", "g", "-a", "builder", "-k", key, "-f", "json")
    assert spent.exit_code == 0, spent.stderr
    again = busy("quota", "spend", "-g", "g", "-a", "builder", "-k", key, "-f", "json")  # the old spelling
    assert again.exit_code == 0 and again.json()["receipts"][-1]["replayed"] is True  # type: ignore[index]
    old = busy("writeback", "-g", "g", "-a", "builder", "-k", key, "-s", "did it", "-f", "json")
    assert old.exit_code == 0  # a repeated writeback returns its receipt
    assert "Alias of `loopx turn writeback`" in busy("writeback", "--help").stdout


def test_agents_list_show_remove(busy: Cli) -> None:
    assert [a["agent_id"] for a in busy("agent", "list", "-f", "json").json()["agents"]] == ["builder"]  # type: ignore[index]
    busy("todo", "claim", "-g", "g", "-t", "t1", "-a", "builder")
    shown = busy("agent", "show", "-a", "builder", "-f", "json").json()
    assert shown["work"] == [{"goal_id": "g", "open_turn": None, "claimed_todos": ["t1"]}]  # type: ignore[index]
    held = busy("agent", "remove", "-a", "builder")
    assert held.exit_code == 5 and "still holds work in g" in held.stderr
    busy("todo", "release", "-g", "g", "-t", "t1", "-a", "builder")
    assert busy("agent", "remove", "-a", "builder").exit_code == 0
    assert busy("agent", "list", "-f", "json").json()["agents"] == []  # type: ignore[index]
    assert busy("agent", "show", "-a", "builder").exit_code == 3


def test_goals_and_todos_archive_keeping_their_history(busy: Cli) -> None:
    todo = busy("todo", "archive", "-g", "g", "-t", "t1", "--reason", "not now", "-f", "json").json()
    assert (todo["status"], todo["blocked_reason"]) == ("deferred", "not now")  # type: ignore[index]
    assert busy("todo", "show", "-g", "g", "-t", "t1", "-f", "json").json()["status"] == "deferred"  # type: ignore[index]
    assert busy("todo", "update", "-g", "g", "-t", "t1", "-p", "1", "-f", "json").json()["status"] == "open"  # type: ignore[index]
    key = settled_turn(busy)
    assert busy("goal", "archive", "-g", "g").exit_code == 5  # an open turn
    busy("turn", "spend", "-g", "g", "-a", "builder", "-k", key)
    busy("todo", "complete", "-g", "g", "-t", "t1", "-a", "builder", "-e", "done")
    done = busy("goal", "archive", "-g", "g", "-f", "json")
    assert done.exit_code == 0 and done.json()["status"] == "done"  # type: ignore[index]
    assert busy("quota", "should-run", "-g", "g", "-a", "builder").json()["decision"] != "run"  # type: ignore[index]
    assert busy("history", "-g", "g", "-f", "json").json()["runs"]  # type: ignore[index]  # history kept
    assert busy("goal", "resume", "-g", "g").exit_code == 5  # done is left only by --reopen
    assert busy("goal", "resume", "-g", "g", "--reopen", "-f", "json").json()["status"] == "active"  # type: ignore[index]


@pytest.mark.parametrize(
    "args",
    [
        ["todo", "archive", "-g", "g", "-t", "t9"],
        ["todo", "show", "-g", "nope", "-t", "t1"],
        ["goal", "archive", "-g", "nope"],
        ["agent", "remove", "-a", "ghost"],
    ],
)
def test_missing_things_are_not_found(busy: Cli, args: list[str]) -> None:
    result = busy(*args)
    assert result.exit_code == 3 and len(result.stderr.splitlines()) == 1
