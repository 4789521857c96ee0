"""Class: a turn settles only while its agent holds the todo's lease; settling renews it.

Once, after another agent took over an expired lease, the first agent's writeback and
spend still succeeded, so the todo was done and charged twice; nothing renewed a lease
during a long turn. Also here: an open turn whose journal is gone can be cleared.
"""

from __future__ import annotations

import contextlib
import json
from datetime import timedelta
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.clock import iso
from loopx_core.errors import ConflictError, ExitCode, SettlementError
from loopx_core.kernel.algebra import StepKind
from loopx_core.ops import todos
from loopx_core.settlement.steps import TurnContext
from loopx_core.settlement.turns import begin_turn, settle_steps
from tests.builders import build_project
from tests.conftest import LOOPX_BIN, T0, run_loopx

LEASE_LOST = int(ExitCode.LEASE_LOST)


def _at(minutes: float) -> str:
    return iso(T0 + timedelta(minutes=minutes))


def _ledger(root: Path) -> list[dict]:  # type: ignore[type-arg]
    path = root / ".loopx/goals/g/events.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def _begin(root: Path, agent: str, minutes: float, *extra: str) -> str:
    begun = run_loopx(
        "turn", "begin", "-g", "g", "-a", agent, "-t", "t1", *extra, root=root, now=_at(minutes)
    )
    assert begun.exit_code == 0, begun.stderr
    return str(json.loads(begun.stdout)["turn_key"])


def _writeback(root: Path, agent: str, key: str, minutes: float) -> int:
    args = ["writeback", "-g", "g", "-a", agent, "-k", key, "--summary", "s", "--validation-status", "passed"]
    return run_loopx(*args, root=root, now=_at(minutes)).exit_code


def _spend(root: Path, agent: str, key: str, minutes: float) -> int:
    return run_loopx(
        "quota", "spend", "-g", "g", "-a", agent, "-k", key, root=root, now=_at(minutes)
    ).exit_code


def test_after_a_takeover_the_first_agents_writeback_and_spend_are_refused(tmp_path: Path) -> None:
    build_project(tmp_path)
    first = _begin(tmp_path, "builder", 0, "--lease-minutes", "30")
    taken = run_loopx("todo", "claim", "-g", "g", "-t", "t1", "-a", "other", root=tmp_path, now=_at(31))
    assert taken.exit_code == 0, taken.stderr
    refused = run_loopx(
        "writeback", "-g", "g", "-a", "builder", "-k", first, "--summary", "s",
        "--validation-status", "passed", "--format", "json", root=tmp_path, now=_at(32),
    )  # fmt: skip
    assert refused.exit_code == LEASE_LOST, refused.stderr
    assert json.loads(refused.stdout)["error"]["code"] == "lease_lost"
    assert refused.stderr.count("\n") == 1 and "Traceback" not in refused.stderr
    assert _spend(tmp_path, "builder", first, 33) in (LEASE_LOST, int(ExitCode.WRITEBACK_MISSING))
    assert _ledger(tmp_path) == []
    assert not (tmp_path / ".loopx/goals/g/runs/index.jsonl").exists()


def test_lease_lost_between_writeback_and_spend_stops_the_spend(tmp_path: Path) -> None:
    build_project(tmp_path)
    first = _begin(tmp_path, "builder", 0, "--lease-minutes", "30")
    assert _writeback(tmp_path, "builder", first, 1) == 0  # renews until minute 31
    assert (
        run_loopx("todo", "claim", "-g", "g", "-t", "t1", "-a", "other", root=tmp_path, now=_at(32)).exit_code
        == 0
    )
    assert _spend(tmp_path, "builder", first, 33) == LEASE_LOST
    assert _ledger(tmp_path) == []


def test_each_settlement_phase_renews_the_lease(tmp_path: Path) -> None:
    build_project(tmp_path)
    key = _begin(tmp_path, "builder", 0, "--lease-minutes", "30")
    assert _writeback(tmp_path, "builder", key, 25) == 0  # the lease now runs to minute 55
    claim = run_loopx("todo", "claim", "-g", "g", "-t", "t1", "-a", "other", root=tmp_path, now=_at(40))
    assert claim.exit_code == int(ExitCode.CONFLICT), claim.stderr
    assert _spend(tmp_path, "builder", key, 41) == 0
    assert len(_ledger(tmp_path)) == 1


def test_an_expired_lease_nobody_took_is_still_held_and_renewed(tmp_path: Path) -> None:
    store = build_project(tmp_path)
    key = _begin(tmp_path, "builder", 0, "--lease-minutes", "30")
    assert _writeback(tmp_path, "builder", key, 45) == 0
    todo = store.read_goal("g").todo("t1")
    assert todo is not None and todo.claimed_by == "builder"
    assert todo.lease_expires_at == T0 + timedelta(minutes=75)


def test_turn_renew_extends_and_reports_a_lost_lease(tmp_path: Path) -> None:
    store = build_project(tmp_path)
    key = _begin(tmp_path, "builder", 0, "--lease-minutes", "30")
    renewed = run_loopx("turn", "renew", "-g", "g", "-a", "builder", "-k", key, root=tmp_path, now=_at(20))
    assert renewed.exit_code == 0, renewed.stderr
    assert json.loads(renewed.stdout)["todo"]["lease_expires_at"].startswith("2026-11-29T12:50")
    todos.release_todo(store, "g", "t1", "builder", T0 + timedelta(minutes=21))
    todos.claim_todo(store, "g", "t1", "other", T0 + timedelta(minutes=22))
    lost = run_loopx("turn", "renew", "-g", "g", "-a", "builder", "-k", key, root=tmp_path, now=_at(23))
    assert lost.exit_code == LEASE_LOST and "other" in lost.stderr


def test_the_driver_renews_the_lease_while_the_host_command_runs(tmp_path: Path) -> None:
    build_project(tmp_path)
    # a 3-second lease; the host command outlives it while another agent tries to take the todo
    host = (
        f'sleep 4.5; {LOOPX_BIN} --root "$LOOPX_ROOT" todo claim -g g -t t1 -a other >> claims.log 2>&1; true'
    )
    run = run_loopx(
        "turn", "run-once", "-g", "g", "-a", "builder", "--host-command", host,
        "--validation-command", "true", "--lease-minutes", "0.05", root=tmp_path, now=None,
    )  # fmt: skip
    assert run.exit_code == 0, run.stderr
    assert "claimed by 'builder'" in (tmp_path / "claims.log").read_text()  # the takeover lost
    assert [e["agent_id"] for e in _ledger(tmp_path)] == ["builder"]


def test_the_driver_stops_a_host_command_whose_lease_was_lost(tmp_path: Path) -> None:
    build_project(tmp_path)
    host = f'{LOOPX_BIN} --root "$LOOPX_ROOT" todo release -g g -t t1 -a builder >/dev/null && sleep 30'
    run = run_loopx(
        "turn", "run-once", "-g", "g", "-a", "builder", "--host-command", host,
        "--validation-command", "true", "--lease-minutes", "0.05", root=tmp_path, now=None, timeout=20,
    )  # fmt: skip
    assert run.exit_code == LEASE_LOST, run.stderr
    assert _ledger(tmp_path) == []


def test_an_open_turn_without_its_journal_can_be_cleared(tmp_path: Path) -> None:
    store = build_project(tmp_path)
    key = _begin(tmp_path, "builder", 0)
    store.turn_path("g", key).unlink()
    again = run_loopx("turn", "begin", "-g", "g", "-a", "builder", "-t", "t1", root=tmp_path)
    assert again.exit_code == int(ExitCode.CONFLICT) and "loopx turn cancel" in again.stderr
    resume = run_loopx(
        "turn", "run-once", "-g", "g", "-a", "builder", "--host-command", "true",
        "--validation-command", "true", "--resume", root=tmp_path,
    )  # fmt: skip
    assert resume.exit_code == int(ExitCode.NOT_FOUND) and "loopx turn cancel" in resume.stderr
    cleared = run_loopx("turn", "cancel", "-g", "g", "-a", "builder", "-k", key, root=tmp_path)
    assert cleared.exit_code == 0, cleared.stderr
    assert json.loads(cleared.stdout)["status"] == "cleared"
    assert store.read_goal("g").open_turns == {}
    assert _begin(tmp_path, "builder", 1)  # the agent can work again
    other = run_loopx("turn", "cancel", "-g", "g", "-a", "other", "-k", key, root=tmp_path)
    assert other.exit_code == int(ExitCode.NOT_FOUND)  # only the agent's own open turn is cleared


actions = st.lists(
    st.tuples(
        st.sampled_from(["builder", "other"]),
        st.sampled_from(["settle", "claim", "wait"]),
        st.integers(1, 50),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(script=actions)
def test_no_agent_settles_a_todo_it_does_not_hold(tmp_path_factory, script) -> None:  # type: ignore[no-untyped-def]
    """Two agents, one todo, leases of 30 minutes, random steps and waits: every successful
    settlement step belongs to the agent holding the lease at that moment, and the todo is
    charged at most once per turn and never by two agents."""
    store = build_project(tmp_path_factory.mktemp("lease"))
    clock = [T0]
    keys: dict[str, str] = {}
    settled: list[str] = []
    for agent, action, minutes in script:
        clock[0] += timedelta(minutes=minutes)
        now = clock[0]
        if action == "wait":
            continue
        if action == "claim":
            with contextlib.suppress(ConflictError):
                todos.claim_todo(store, "g", "t1", agent, now)
            continue
        if agent not in keys:
            try:
                keys[agent] = begin_turn(store, "g", agent, now, todo_id="t1")[0].turn_key
            except Exception:
                continue
        holder = store.read_goal("g").todo("t1")
        held = holder is not None and holder.claimed_by == agent and holder.status == "claimed"
        ctx = TurnContext(
            store, "g", agent, keys[agent], lambda n=now: n, summary="s", validation_passed=True, slots=1
        )
        try:
            packet = settle_steps(
                ctx, [StepKind.VALIDATION, StepKind.DURABLE_WRITEBACK, StepKind.QUOTA_SPEND], adapter="t"
            )
            if all(r["replayed"] for r in packet["receipts"]):
                continue  # a replay of a settled turn has no effect, held or not
            assert held, f"{agent} settled without holding the lease"
            if agent not in settled:
                settled.append(agent)
        except SettlementError as refused:
            assert refused.code in ("lease_lost", "budget_rejected"), refused.message
            if refused.code == "lease_lost":
                assert not held
    events = store.ledger_all("g")
    assert [e.agent_id for e in events] == settled  # charged exactly when it held the lease
    assert len({e.turn_instance_id for e in events}) == len(events)


def _packet(root: Path, agent: str, minutes: float) -> dict:  # type: ignore[type-arg]
    shown = run_loopx("quota", "should-run", "-g", "g", "-a", agent, root=root, now=_at(minutes))
    assert shown.exit_code == 0, shown.stderr
    return json.loads(shown.stdout)  # type: ignore[no-any-return]


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(away=st.floats(min_value=31, max_value=6 * 24 * 60))
def test_a_spent_todo_is_never_redone_by_another_agent(tmp_path_factory, away: float) -> None:  # type: ignore[no-untyped-def]
    """The host dies between the spend and `todo complete` and stays away past its 30 min lease:
    the other agent is not offered the paid-for todo; the first is sent back to complete it."""
    root = tmp_path_factory.mktemp("spent")
    build_project(root, todo_count=1)
    key = _begin(root, "builder", 0, "--lease-minutes", "30")
    assert _writeback(root, "builder", key, 1) == 0 and _spend(root, "builder", key, 2) == 0
    other = _packet(root, "other", 2 + away)
    assert (other.get("selected_todo") or {}).get("todo_id") != "t1", other["reason"]
    took = run_loopx("turn", "begin", "-g", "g", "-a", "other", "-t", "t1", root=root, now=_at(2 + away))
    assert took.exit_code != 0, took.stdout
    back = _packet(root, "builder", 2 + away)
    assert "todo complete" in json.dumps(back["interaction_contract"]["cli_channel"]), back["reason"]
    done = run_loopx(
        "todo",
        "complete",
        "-g",
        "g",
        "-t",
        "t1",
        "-a",
        "builder",
        "--evidence",
        "e",
        root=root,
        now=_at(3 + away),
    )
    assert done.exit_code == 0, done.stderr
    assert [e["kind"] for e in _ledger(root)] == ["spend"]
