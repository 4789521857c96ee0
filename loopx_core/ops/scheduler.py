"""Scheduler handshake: hosts report an applied (ack) or failed rrule; unchanged polls back off.

`.loopx/goals/<goal>/scheduler.json` keeps, per agent, the rrule the host last applied and
the packet fingerprint it applied it for. should-run (read-only) compares the current
fingerprint with it: an unchanged poll lengthens the interval step by step up to a cap; a
material change resets it.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from loopx_core.errors import UsageError
from loopx_core.ids import check_id
from loopx_core.models.records import SchedulerEntry, SchedulerState
from loopx_core.ops.require import require_agent, require_goal
from loopx_core.store.base import Store
from loopx_core.store.files import FileStore


def path(store: FileStore, goal_id: str) -> Path:
    """`.loopx/goals/<goal>/scheduler.json`."""
    return store.scheduler_path(goal_id)


def read(store: Store, goal_id: str) -> SchedulerState:
    """The scheduler state (empty if none was reported yet)."""
    return store.read_scheduler(goal_id)


def entry(store: Store, goal_id: str, agent_id: str) -> SchedulerEntry | None:
    """One agent's entry, if it has reported anything."""
    return read(store, goal_id).agents.get(agent_id)


def _update(store: Store, goal_id: str, agent_id: str, change) -> SchedulerEntry:  # type: ignore[no-untyped-def]
    registry = store.read_registry()
    require_goal(registry, goal_id)
    require_agent(registry, agent_id)
    with store.goal_lock(goal_id):
        state = read(store, goal_id)
        current = state.agents.setdefault(agent_id, SchedulerEntry())
        change(current)
        store.write_scheduler(state)
        return current


def ack(
    store: Store,
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
        e.last_error, e.failures = None, 0  # a successful ack ends a run of failures

    return _update(store, goal_id, agent_id, change)


def fail(store: Store, goal_id: str, agent_id: str, now: datetime, *, error: str) -> SchedulerEntry:
    """The host could not apply the recommended rrule (failures count until the next ack)."""
    if not error.strip():
        raise UsageError("--error must say what failed")

    def change(e: SchedulerEntry) -> None:
        e.failures += 1
        e.last_error = error.strip()[:300]
        e.failed_at = now

    return _update(store, goal_id, agent_id, change)
