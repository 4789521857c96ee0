"""The quota engine: allowed and spent slots, charging, voids, release times."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopx_core.models.records import LedgerEvent, QuotaPolicy
from loopx_core.ops import goals, spend
from loopx_core.quota import ATTENTION_ORDER, EVALUATION_ORDER, charge_slots, compute_usage
from tests.conftest import T0, Project


@pytest.mark.parametrize(
    ("compute", "window", "slot", "allowed"),
    [
        (1.0, 24, 1, 1440),
        (0.5, 24, 1, 720),
        (0.0, 24, 1, 0),
        (1.0, 1, 5, 12),
        (0.1, 24, 1, 144),
        (0.333, 3, 1, 59),
    ],
)
def test_allowed_slots(compute: float, window: float, slot: float, allowed: int) -> None:
    assert QuotaPolicy(compute=compute, window_hours=window, slot_minutes=slot).allowed_slots == allowed


@pytest.mark.parametrize(
    ("seconds", "slot", "slots"), [(0, 1, 1), (59, 1, 1), (60, 1, 1), (61, 1, 2), (450, 1, 8), (600, 5, 2)]
)
def test_charge_by_duration(seconds: float, slot: float, slots: int) -> None:
    assert charge_slots(QuotaPolicy(slot_minutes=slot), seconds) == slots


def test_orders_are_the_documented_ones() -> None:
    assert EVALUATION_ORDER == (
        "paused",
        "blocked_health",
        "operator_gate",
        "focus_wait",
        "throttled",
        "waiting",
        "eligible",
    )
    assert ATTENTION_ORDER == (
        "blocked_health",
        "operator_gate",
        "focus_wait",
        "eligible",
        "waiting",
        "throttled",
        "paused",
    )


def _spend(seq: int, minutes: float, slots: int, agent: str = "a") -> LedgerEvent:
    return LedgerEvent(
        schema_version=1,
        event_id=f"ev-{seq}",
        seq=seq,
        kind="spend",
        at=T0 + timedelta(minutes=minutes),
        goal_id="g",
        agent_id=agent,
        slots=slots,
    )


def test_rolling_window_and_release_time() -> None:
    policy = QuotaPolicy(compute=1.0, window_hours=1, slot_minutes=6)  # 10 slots per hour
    events = [_spend(1, 0, 4), _spend(2, 20, 3), _spend(3, 40, 3)]
    usage = compute_usage(policy, events, T0 + timedelta(minutes=50))
    assert (usage.allowed_slots, usage.spent_slots, usage.exhausted) == (10, 10, True)
    assert usage.released_at() == T0 + timedelta(minutes=60)  # the first spend leaves the window
    later = compute_usage(policy, events[1:], T0 + timedelta(minutes=61))
    assert (later.spent_slots, later.exhausted, later.released_at()) == (6, False, None)


def test_void_removes_a_spend() -> None:
    policy = QuotaPolicy(compute=1.0, window_hours=1, slot_minutes=6)
    void = LedgerEvent(
        schema_version=1,
        event_id="ev-3",
        seq=3,
        kind="void",
        at=T0 + timedelta(minutes=5),
        goal_id="g",
        agent_id="a",
        slots=4,
        voids_event_id="ev-1",
    )
    usage = compute_usage(policy, [_spend(1, 0, 4), _spend(2, 1, 2), void], T0 + timedelta(minutes=10))
    assert usage.spent_slots == 2


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 300), st.integers(1, 30)), min_size=1, max_size=40),
    st.integers(1, 200),
)
def test_release_time_is_exact(spends: list[tuple[int, int]], allowed: int) -> None:
    """At released_at the window holds fewer than allowed slots; a moment before, it does not."""
    policy = QuotaPolicy(compute=1.0, window_hours=1, slot_minutes=60 / allowed)
    events = [_spend(i + 1, m, s) for i, (m, s) in enumerate(sorted(spends))]
    now = T0 + timedelta(minutes=300)
    window_start = now - timedelta(hours=1)
    usage = compute_usage(policy, [e for e in events if e.at >= window_start], now)
    assert usage.allowed_slots == allowed
    released = usage.released_at()
    if not usage.exhausted:
        assert released is None
        return
    assert released is not None and released > now

    def exhausted_at(moment):  # type: ignore[no-untyped-def]
        return compute_usage(policy, [e for e in events if e.at <= moment], moment).exhausted

    assert not exhausted_at(released)
    assert exhausted_at(released - timedelta(seconds=1))


def test_spend_is_idempotent_per_turn_instance(project: Project) -> None:
    goals.add_goal(project.store, "g", "Objective", T0)
    goals.register_agent(project.store, "a", [], T0)
    first = spend.spend(project.store, "g", "a", T0, slots=3, turn_instance_id="ti-1")
    again = spend.spend(project.store, "g", "a", T0 + timedelta(minutes=1), slots=5, turn_instance_id="ti-1")
    assert (first.replayed, again.replayed) == (False, True)
    assert again.event == first.event
    assert len(project.store.ledger_all("g")) == 1


def test_void_twice_returns_first_void(project: Project) -> None:
    goals.add_goal(project.store, "g", "Objective", T0)
    goals.register_agent(project.store, "a", [], T0)
    spend.spend(project.store, "g", "a", T0, slots=3)
    one = spend.void(project.store, "g", "ev-1", T0)
    two = spend.void(project.store, "g", "ev-1", T0)
    assert (one.replayed, two.replayed, two.event.event_id) == (False, True, "ev-2")
    assert spend.quota_status(project.store, "g", T0)["spent_slots"] == 0


def test_measured_duration_from_claim(project: Project) -> None:
    from loopx_core.ops import todos

    goals.add_goal(project.store, "g", "Objective", T0)
    goals.register_agent(project.store, "a", [], T0)
    todos.add_todo(project.store, "g", "x", T0)
    todos.claim_todo(project.store, "g", "t1", "a", T0)
    result = spend.spend(project.store, "g", "a", T0 + timedelta(minutes=7, seconds=30), todo_id="t1")
    assert (result.event.slots, result.event.duration_seconds) == (8, 450.0)


def test_a_charge_never_exceeds_the_slot_domain() -> None:
    from loopx_core.models.constants import MAX_SLOTS

    policy = QuotaPolicy(slot_minutes=0.01)
    assert charge_slots(policy, 10.0**15) == MAX_SLOTS
