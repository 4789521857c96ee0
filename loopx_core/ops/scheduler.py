"""Scheduler handshake: hosts report an applied (ack) or failed rrule; unchanged polls back off.

`.loopx/goals/<goal>/scheduler.json` keeps, per agent, the rrule the host last applied and
the packet fingerprint it applied it for. should-run (read-only) compares the current
fingerprint with it: an unchanged poll lengthens the interval step by step up to a cap; a
material change resets it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from loopx_core.errors import NotFoundError, UsageError
from loopx_core.ids import check_id
from loopx_core.models.common import Id, StrictModel, Time
from loopx_core.models.domain import Count
from loopx_core.ops.goals import require_agent, require_goal
from loopx_core.store.atomic import read_model, write_model
from loopx_core.store.files import FileStore


class SchedulerEntry(StrictModel):
    """One agent's heartbeat as the host last reported it."""

    applied_rrule: str | None = None
    paused: bool = False
    fingerprint: str | None = None
    unchanged_polls: Count = 0
    acked_at: Time | None = None
    failures: Count = 0
    last_error: str | None = None
    failed_at: Time | None = None


class SchedulerState(StrictModel):
    """The goal's scheduler file."""

    schema_version: Literal[1]
    goal_id: Id
    agents: dict[Id, SchedulerEntry] = Field(default_factory=dict)


def path(store: FileStore, goal_id: str):  # type: ignore[no-untyped-def]
    """`.loopx/goals/<goal>/scheduler.json`."""
    return store.goal_dir(goal_id) / "scheduler.json"


def read(store: FileStore, goal_id: str) -> SchedulerState:
    """The scheduler state (empty if none was reported yet)."""
    try:
        return read_model(path(store, goal_id), SchedulerState, what="scheduler state", root=store.root)
    except NotFoundError:
        return SchedulerState(schema_version=1, goal_id=goal_id)


def entry(store: FileStore, goal_id: str, agent_id: str) -> SchedulerEntry | None:
    """One agent's entry, if it has reported anything."""
    return read(store, goal_id).agents.get(agent_id)


def _update(store: FileStore, goal_id: str, agent_id: str, change) -> SchedulerEntry:  # type: ignore[no-untyped-def]
    registry = store.read_registry()
    require_goal(registry, goal_id)
    require_agent(registry, agent_id)
    with store.goal_lock(goal_id):
        state = read(store, goal_id)
        current = state.agents.setdefault(agent_id, SchedulerEntry())
        change(current)
        write_model(path(store, goal_id), state)
        return current


def ack(
    store: FileStore,
    goal_id: str,
    agent_id: str,
    now: datetime,
    *,
    rrule: str | None,
    pause: bool = False,
    fingerprint: str | None = None,
) -> SchedulerEntry:
    """The host applied `rrule` (or paused the heartbeat) for the packet `fingerprint`."""
    if (rrule is None) == (not pause):
        raise UsageError("give exactly one of --rrule or --pause")
    if rrule is not None and not rrule.startswith("FREQ="):
        raise UsageError(f"invalid --rrule {rrule!r}: expected an RRULE such as FREQ=MINUTELY;INTERVAL=10")
    if fingerprint is not None:
        check_id("fingerprint", fingerprint)

    def change(e: SchedulerEntry) -> None:
        same = fingerprint is not None and fingerprint == e.fingerprint
        e.unchanged_polls = e.unchanged_polls + 1 if same else 0
        e.applied_rrule, e.paused, e.fingerprint, e.acked_at = rrule, pause, fingerprint, now
        e.last_error = None

    return _update(store, goal_id, agent_id, change)


def fail(store: FileStore, goal_id: str, agent_id: str, now: datetime, *, error: str) -> SchedulerEntry:
    """The host could not apply the recommended rrule."""
    if not error.strip():
        raise UsageError("--error must say what failed")

    def change(e: SchedulerEntry) -> None:
        e.failures += 1
        e.last_error = error.strip()[:300]
        e.failed_at = now

    return _update(store, goal_id, agent_id, change)
