"""`decide.scope.lease_lost`, in-process: every case that decides whether a turn may still settle."""

from __future__ import annotations

from datetime import timedelta

from loopx_core.decide.scope import lease_lost
from loopx_core.models.constants import SCHEMA_VERSION
from loopx_core.models.identity import SettlementIdentity
from loopx_core.models.records import GoalState, Todo
from tests.conftest import T0

MINE = SettlementIdentity("g", "builder", "t1", "ti-1")


def _state(**todo: object) -> GoalState:
    fields = {"todo_id": "t1", "title": "t", "created_at": T0, "updated_at": T0, **todo}
    return GoalState(schema_version=SCHEMA_VERSION, goal_id="g", todos=[Todo(**fields)])  # type: ignore[arg-type]


def test_held_claimed_and_even_expired_is_not_lost() -> None:
    past = T0 - timedelta(hours=1)
    assert lease_lost(_state(status="claimed", claimed_by="builder", lease_expires_at=past), MINE) is None


def test_a_replan_holds_no_lease() -> None:
    replan = SettlementIdentity("g", "builder", None, "ti-1", "replan-g-v1")
    assert lease_lost(_state(status="open"), replan) is None


def test_each_way_of_losing_it_says_why() -> None:
    assert (
        lease_lost(GoalState(schema_version=SCHEMA_VERSION, goal_id="g"), MINE)
        == "todo 't1' no longer exists"
    )
    assert lease_lost(_state(status="claimed", claimed_by="other"), MINE) == (
        "todo 't1' is held by 'other': agent 'builder' lost its lease"
    )
    assert lease_lost(_state(status="open"), MINE) == "todo 't1' is open: agent 'builder' lost its lease"
    # the holder but no longer claimed (released, then reclaimed state drifted): lost too
    assert lease_lost(_state(status="blocked", claimed_by="builder"), MINE) == (
        "todo 't1' is held by 'builder': agent 'builder' lost its lease"
    )


def test_a_done_todo_is_held_only_for_a_retried_closeout() -> None:
    done = _state(status="done")
    assert lease_lost(done, MINE) == "todo 't1' is done: agent 'builder' lost its lease"  # the default
    assert lease_lost(done, MINE, done_is_held=True) is None
    assert lease_lost(_state(status="open"), MINE, done_is_held=True) is not None
