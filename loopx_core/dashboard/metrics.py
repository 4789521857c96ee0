"""`/metrics`: every goal and agent of the store in Prometheus' text format, read per scrape.

The numbers are the ones `loopx status` and `loopx health` show (the same reads, nothing
cached): a scrape is a read-only pass over the store, and `prometheus_client` writes the
exposition format. A goal whose state cannot be read still has its quota state
(`blocked_health`); a series whose file cannot be read is left out rather than guessed.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.registry import CollectorRegistry

from loopx_core.errors import NotFoundError, StateInvalidError
from loopx_core.ops.health import liveness
from loopx_core.quota import ATTENTION_ORDER
from loopx_core.status import attention
from loopx_core.store.base import Store

CONTENT_TYPE = CONTENT_TYPE_LATEST
"""The scrape's content type (Prometheus' text format, as prometheus_client writes it)."""
GOAL_STATES = (*ATTENTION_ORDER, "done")
"""Every value of `loopx_goal_state`'s `state` label."""
AGENT_STATUSES = ("live", "stalled", "paused", "unjudged")


class LoopCollector:
    """Collects the store's goals and agents at each scrape."""

    def __init__(self, store: Store, clock: Callable[[], datetime]) -> None:
        self.store = store
        self.clock = clock

    def describe(self) -> list[Metric]:
        """Nothing up front: the registry must not scrape the store when the collector is registered."""
        return []

    def collect(self) -> Iterator[Metric]:
        """One pass over the store: goal series, then agent series."""
        now = self.clock()
        rows = attention(self.store, now)
        yield from _goal_metrics(self.store, rows)
        yield from _agent_metrics(self.store, now)


def _goal_metrics(store: Store, rows: list[dict[str, Any]]) -> Iterator[Metric]:
    state = GaugeMetricFamily(
        "loopx_goal_state",
        "1 for the goal's quota state (as loopx status shows it), else 0",
        labels=["goal_id", "state"],
    )
    spent = GaugeMetricFamily(
        "loopx_goal_slots_spent", "Slots spent in the rolling window", labels=["goal_id"]
    )
    allowed = GaugeMetricFamily("loopx_goal_slots_allowed", "Slots the window allows", labels=["goal_id"])
    todos = GaugeMetricFamily("loopx_goal_todos_open", "Open todos (agent work)", labels=["goal_id"])
    gates = GaugeMetricFamily("loopx_goal_gates_open", "Open operator gates", labels=["goal_id"])
    turns = CounterMetricFamily(
        "loopx_goal_turns_settled",
        "Turns written back, by validation verdict",
        labels=["goal_id", "validation"],
    )
    ended = GaugeMetricFamily(
        "loopx_goal_turns",
        "Turns by journal status, and a failed or stopped one by its typed refusal",
        labels=["goal_id", "status", "refusal"],
    )
    for row in rows:
        goal_id = row["goal_id"]
        for name in GOAL_STATES:
            state.add_metric([goal_id, name], 1.0 if row["state"] == name else 0.0)
        if row["spent_slots"] is not None:
            spent.add_metric([goal_id], float(row["spent_slots"]))
        if row["allowed_slots"] is not None:
            allowed.add_metric([goal_id], float(row["allowed_slots"]))
        try:
            goal = store.read_goal(goal_id)
        except (StateInvalidError, NotFoundError):
            goal = None  # unreadable: no counts rather than wrong ones
        if goal is not None:
            todos.add_metric([goal_id], float(row["todos_open"]))
            gates.add_metric([goal_id], float(sum(1 for g in goal.gates if g.status == "open")))
        with contextlib.suppress(StateInvalidError, NotFoundError):
            verdicts = Counter(run.validation for run in store.read_history(goal_id))
            for verdict in ("passed", "failed"):
                turns.add_metric([goal_id, verdict], float(verdicts[verdict]))
        with contextlib.suppress(StateInvalidError, NotFoundError):
            for (status, refusal), n in sorted(_outcomes(store, goal_id).items()):
                ended.add_metric([goal_id, status, refusal], float(n))
    yield from (state, spent, allowed, todos, gates, turns, ended)


def _outcomes(store: Store, goal_id: str) -> Counter[tuple[str, str]]:
    """Journals by (status, refusal): a failed turn's failure kind, a stopped one's `cancelled`."""
    out: Counter[tuple[str, str]] = Counter()
    for journal in store.read_journals(goal_id):
        refusal = (journal.failure or {}).get("kind", "") if journal.status == "failed" else ""
        out[journal.status, "cancelled" if journal.status == "stopped" else refusal] += 1
    return out


def _agent_metrics(store: Store, now: datetime) -> Iterator[Metric]:
    silent = GaugeMetricFamily(
        "loopx_agent_silent_seconds", "Seconds since the agent's last sign of life", labels=["agent_id"]
    )
    status = GaugeMetricFamily(
        "loopx_agent_status",
        "1 for the agent's liveness (as loopx health shows it), else 0",
        labels=["agent_id", "status"],
    )
    for row in liveness(store, now):
        if row.silent_minutes is not None:
            silent.add_metric([row.agent_id], round(row.silent_minutes * 60, 3))
        for name in AGENT_STATUSES:
            status.add_metric([row.agent_id, name], 1.0 if row.status == name else 0.0)
    yield from (silent, status)


def exposition(store: Store, clock: Callable[[], datetime]) -> bytes:
    """The store's metrics in Prometheus' text format."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(LoopCollector(store, clock))  # type: ignore[arg-type]
    return generate_latest(registry)
