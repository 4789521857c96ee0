"""Liveness: an agent silent for two cadences is stalled; its owner is notified once per stall."""

from __future__ import annotations

from datetime import datetime

from loopx_core.clock import iso
from loopx_core.doctor.findings import Finding
from loopx_core.notices import events
from loopx_core.notices.emit import queue_notice
from loopx_core.ops.health import STALL_CADENCES, liveness
from loopx_core.store.base import Store


def check_liveness(store: Store, now: datetime, *, notify: bool = True) -> list[Finding]:
    """A finding per stalled agent; with `notify`, its `stalled` notice is queued (once by id)."""
    found = []
    for row in liveness(store, now):
        if row.status != "stalled" or row.last_seen is None or row.cadence_minutes is None:
            continue
        if notify:
            queue_notice(store.root, events.stalled(row.agent_id, row.last_seen, row.cadence_minutes, now))
        found.append(
            Finding(
                "agent_stalled",
                f"agent {row.agent_id} last seen {iso(row.last_seen)} ({row.seen_by}), "
                f"{row.silent_minutes:.0f} min ago: more than {STALL_CADENCES} cadences of "
                f"{row.cadence_minutes:g} min",
                {"agent_id": row.agent_id, "last_seen": iso(row.last_seen)},
                hint="check the agent's host: its heartbeat automation, Stop hook or listener",
            )
        )
    return found
