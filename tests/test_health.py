"""`loopx health`: findings recorded by hand; a high one blocks the goal and its packet names the
doctor; clearing unblocks; every refusal is one line with its documented exit code."""

from __future__ import annotations

import pytest

from tests.conftest import Cli


@pytest.fixture
def goal(cli: Cli) -> Cli:
    for args in (
        ["goal", "add", "-g", "g", "-o", "Ship"],
        ["agent", "register", "-a", "a", "-c", "py"],
        ["todo", "add", "-g", "g", "--title", "Write it"],
    ):
        assert cli(*args).exit_code == 0
    return cli


def test_a_high_finding_blocks_until_cleared(goal: Cli) -> None:
    added = goal("health", "add", "-g", "g", "--code", "disk-full", "-m", "  the disk\nis full ")
    assert added.exit_code == 0 and added.json() == {  # type: ignore[comparison-overlap]
        "goal_id": "g",
        "code": "disk-full",
        "severity": "high",
        "message": "the disk is full",
    }
    packet = goal("quota", "should-run", "-g", "g", "-a", "a")
    assert packet.exit_code == 4
    data = packet.json()
    assert data["quota"]["state"] == "blocked_health" and "disk-full" in data["reason"]  # type: ignore[index]
    assert data["interaction_contract"]["cli_channel"]["next_cli_actions"] == ["loopx doctor --repair"]  # type: ignore[index]
    assert data["interaction_contract"]["user_channel"]["notify"] is True  # type: ignore[index]
    listed = goal("health", "list", "-f", "json").json()
    assert [f["code"] for f in listed["findings"]] == ["disk-full"]  # type: ignore[index]
    cleared = goal("health", "clear", "-g", "g", "--code", "disk-full")
    assert cleared.exit_code == 0 and len(cleared.json()["cleared"]) == 1  # type: ignore[index]
    assert goal("quota", "should-run", "-g", "g", "-a", "a").exit_code == 0


def test_low_and_medium_do_not_block_and_the_same_code_replaces(goal: Cli) -> None:
    goal("health", "add", "-g", "g", "--code", "slow-ci", "-m", "CI takes an hour", "--severity", "low")
    goal("health", "add", "-g", "g", "--code", "slow-ci", "-m", "CI takes two hours", "--severity", "medium")
    assert goal("quota", "should-run", "-g", "g", "-a", "a").json()["decision"] == "run"  # type: ignore[index]
    [finding] = goal("health", "list", "-g", "g", "-f", "json").json()["findings"]  # type: ignore[index]
    assert (finding["severity"], finding["message"]) == ("medium", "CI takes two hours")
    assert "| g | slow-ci | medium | CI takes two hours |" in goal("health", "list", "-f", "markdown").stdout
    assert goal("health", "clear", "-g", "g").json()["cleared"][0]["code"] == "slow-ci"  # type: ignore[index]


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["health", "add", "-g", "g", "--code", "Bad Code", "-m", "x"], 2),
        (["health", "add", "-g", "g", "--code", "c", "-m", "   "], 2),
        (["health", "add", "-g", "g", "--code", "c", "-m", "x", "--severity", "fatal"], 2),
        (["health", "add", "-g", "nope", "--code", "c", "-m", "x"], 3),
        (["health", "clear", "-g", "g", "--code", "never-recorded"], 3),
        (["health", "list", "-g", "nope"], 3),
    ],
)
def test_refusals_are_one_line(goal: Cli, args: list[str], code: int) -> None:
    result = goal(*args)
    assert result.exit_code == code, result.stderr
    assert result.stderr.startswith("loopx: error: ") and result.stderr.count("\n") == 1
