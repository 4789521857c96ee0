"""The scheduler handshake: ack / fail, and the backoff of unchanged polls (reset by a change)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Cli


@pytest.fixture
def waiting(cli: Cli) -> Cli:
    """A goal whose only todo is leased to another agent: builder waits."""
    cli("goal", "add", "-g", "g", "-o", "x")
    cli("agent", "register", "-a", "builder")
    cli("agent", "register", "-a", "other")
    cli("todo", "add", "-g", "g", "--title", "Busy")
    cli("todo", "claim", "-g", "g", "-t", "t1", "-a", "other", "--lease-minutes", "600")
    return cli


def tick(cli: Cli) -> dict:  # type: ignore[type-arg]
    """One codex heartbeat: should-run with the surface, then ack exactly what the hint says."""
    packet = cli("quota", "should-run", "-g", "g", "-a", "builder", "--surface", "codex-app").json()
    args = packet["scheduler_hint"]["codex_app"]["ack_hint"]["cli_args"]
    assert cli(*args).exit_code == 0
    return packet["scheduler_hint"]


def test_unchanged_polls_back_off_to_the_cap_and_a_change_resets(waiting: Cli) -> None:
    intervals = []
    for _ in range(6):
        hint = tick(waiting)
        intervals.append((hint["recommended_rrule"], hint["unchanged_polls"], hint["cadence_class"]))
    assert [i[0] for i in intervals] == [
        "FREQ=MINUTELY;INTERVAL=60",
        "FREQ=MINUTELY;INTERVAL=120",
        "FREQ=MINUTELY;INTERVAL=120",
        "FREQ=MINUTELY;INTERVAL=120",
        "FREQ=MINUTELY;INTERVAL=120",
        "FREQ=MINUTELY;INTERVAL=120",
    ]
    assert [i[1] for i in intervals] == [0, 1, 2, 3, 4, 5]
    assert intervals[1][2] == "backoff"
    waiting("todo", "add", "-g", "g", "--title", "Fresh work")  # a material change
    hint = tick(waiting)
    assert (hint["unchanged_polls"], hint["cadence_class"], hint["recommended_rrule"]) == (
        0,
        "active",
        "FREQ=MINUTELY;INTERVAL=10",
    )


def test_backoff_steps_from_a_short_interval(cli: Cli) -> None:
    cli("goal", "add", "-g", "g", "-o", "x", "--min-interval-minutes", "600")
    cli("agent", "register", "-a", "builder")
    cli("todo", "add", "-g", "g", "--title", "t")
    cli("quota", "spend", "-g", "g", "-a", "builder", "--manual", "--slots", "1")
    cli("focus", "wait", "-g", "g", "--reason", "CI", "--for-minutes", "600", "--poll-every-minutes", "7")
    rrules = [tick(cli)["recommended_rrule"] for _ in range(5)]
    assert rrules == [f"FREQ=MINUTELY;INTERVAL={m}" for m in (7, 14, 28, 56, 112)]


def test_paused_goal_pauses_the_heartbeat(waiting: Cli) -> None:
    waiting("goal", "stop", "-g", "g")
    packet = waiting("quota", "should-run", "-g", "g", "-a", "builder", "--surface", "codex-app").json()
    hint = packet["scheduler_hint"]
    assert (hint["action"], hint["recommended_rrule"]) == ("pause", None)
    assert "--pause" in hint["codex_app"]["ack_hint"]["cli_args"]
    ack = waiting(*hint["codex_app"]["ack_hint"]["cli_args"])
    assert ack.json()["paused"] is True


def test_failure_is_recorded(waiting: Cli) -> None:
    packet = waiting("quota", "should-run", "-g", "g", "-a", "builder", "--surface", "codex-app").json()
    args = [
        a.replace("<error>", "automation tool refused the rrule")
        for a in packet["scheduler_hint"]["codex_app"]["failure_hint"]["cli_args"]
    ]
    first = waiting(*args).json()
    second = waiting(*args).json()
    assert (first["failures"], second["failures"], second["last_error"]) == (
        1,
        2,
        "automation tool refused the rrule",
    )
    state = json.loads((waiting.root / ".loopx/goals/g/scheduler.json").read_text())
    assert state["schema_version"] == 1 and state["agents"]["builder"]["failures"] == 2


@pytest.mark.parametrize(
    "args",
    [
        ["--rrule", "every 5 minutes"],
        ["--rrule", "FREQ=MINUTELY;INTERVAL=5", "--pause"],
        [],
        ["--pause", "--fingerprint", "Not An Id"],
    ],
)
def test_bad_acks(waiting: Cli, args: list[str]) -> None:
    result = waiting("quota", "scheduler-ack", "-g", "g", "-a", "builder", *args)
    assert result.exit_code == 2 and result.stderr.startswith("loopx: error: ")


def test_heartbeat_prompt(cli: Cli) -> None:
    out = cli("heartbeat-prompt", "-g", "demo", "-a", "builder")
    assert out.exit_code == 0
    text = out.stdout
    assert "loopx quota should-run --goal-id demo --agent-id builder --surface codex-app" in text
    assert "scheduler-ack" not in text or "ack_hint" in text
    assert text.isascii() and len(text) < 1500
    assert cli("heartbeat-prompt", "-g", "demo", "-a", "builder", "--surface", "dsh").exit_code == 3


def test_host_heartbeat_prompt() -> None:
    from loopx_core.hosts.manager import get_plugin_manager, hosts
    from loopx_core.hosts.model import RenderContext

    known = hosts(get_plugin_manager())
    prompt = known["codex-app"].heartbeat_prompt(RenderContext(host="codex-app", goal_id="g", agent_id="a"))
    assert "--goal-id g --agent-id a --surface codex-app" in prompt
    assert known["dsh"].heartbeat_prompt(RenderContext(host="dsh", goal_id="g", agent_id="a")) is None


def _hint(cli: Cli, *extra: str) -> dict:  # type: ignore[type-arg]
    return cli("quota", "should-run", "-g", "g", "-a", "builder", *extra).json()["scheduler_hint"]


def test_a_failure_shows_in_the_next_packet_and_backs_off_until_an_ack(waiting: Cli) -> None:
    first = _hint(waiting)
    assert (first["ack_expected"], first["rrule_must_change"]) == (True, True)  # nothing applied yet
    assert "failures" not in first
    for n, retry in ((1, 2), (2, 4), (3, 8)):
        assert (
            waiting(
                "quota", "scheduler-fail", "-g", "g", "-a", "builder", "--error", f"tool down {n}"
            ).exit_code
            == 0
        )
        hint = _hint(waiting)
        assert (hint["failures"], hint["last_error"], hint["retry_in_minutes"]) == (
            n,
            f"tool down {n}",
            retry,
        )
        assert hint["ack_expected"] is True
    rrule, fingerprint = hint["recommended_rrule"], hint["fingerprint"]
    ack = [
        "quota",
        "scheduler-ack",
        "-g",
        "g",
        "-a",
        "builder",
        "--rrule",
        rrule,
        "--fingerprint",
        fingerprint,
    ]
    assert waiting(*ack).exit_code == 0
    after = _hint(waiting)
    assert "failures" not in after  # the ack ended the run of failures
    assert after["rrule_must_change"] is (after["recommended_rrule"] != rrule)


def test_the_hosts_current_rrule_says_whether_it_must_change(waiting: Cli) -> None:
    wanted = _hint(waiting)["recommended_rrule"]
    assert _hint(waiting, "--current-rrule", wanted)["rrule_must_change"] is False
    assert _hint(waiting, "--current-rrule", "FREQ=MINUTELY;INTERVAL=1")["rrule_must_change"] is True
