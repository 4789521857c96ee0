"""Health: findings recorded on a goal (a `high` one blocks it), heartbeats, and liveness.

A heartbeat is `.loopx/heartbeats/<agent>.json`, touched by `loopx quota should-run` for an
agent registered with a cadence (the one command every host's heartbeat runs on every tick):
the file's modification time is the heartbeat. It is an observation, not state: one metadata
write, never failing the tick. Liveness also
counts every other sign of life the store holds: a scheduler ack or failure, a turn's journal,
a settled run. An agent silent for more than two cadences is *stalled*.
"""

from __future__ import annotations

import contextlib
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, NamedTuple

from loopx_core.clock import iso
from loopx_core.errors import NotFoundError, StateInvalidError, UsageError
from loopx_core.ids import check_id, shown_value
from loopx_core.models.records import GoalState, HealthFinding, Registry
from loopx_core.ops.require import require_goal
from loopx_core.store.base import Store
from loopx_core.store.files import STATE_DIR

HEARTBEATS = "heartbeats"
STALL_CADENCES = 2
"""Cadences an agent may miss before it is stalled."""
HISTORY_LOOKBACK = 50
"""Runs read back per goal when looking for an agent's last settled turn."""
Severity = Literal["low", "medium", "high"]


# -- findings recorded by hand (or by doctor) ------------------------------------------------------


def add_finding(store: Store, goal_id: str, code: str, severity: str, message: str) -> HealthFinding:
    """Record a finding (one per code: the same code again replaces it); `high` blocks the goal."""
    require_goal(store.read_registry(), goal_id)
    check_id("finding code", code)
    if severity not in ("low", "medium", "high"):
        raise UsageError(f"invalid --severity {shown_value(severity)}: use low, medium or high")
    text = " ".join(message.split())
    if not text:
        raise UsageError("a finding needs a non-empty --message")
    finding = HealthFinding(code=code, severity=severity, message=text[:500])  # type: ignore[arg-type]

    def change(state: GoalState) -> HealthFinding:
        state.health = [h for h in state.health if h.code != code] + [finding]
        return finding

    return store.update_goal(goal_id, change)


def clear_findings(store: Store, goal_id: str, code: str | None = None) -> list[HealthFinding]:
    """Clear one finding (by code) or all of a goal's; clearing what is not there is refused."""
    check_id("goal", goal_id)
    if code is not None:
        check_id("finding code", code)

    def change(state: GoalState) -> list[HealthFinding]:
        gone = [h for h in state.health if code is None or h.code == code]
        if code is not None and not gone:
            raise NotFoundError(f"goal {goal_id!r} has no health finding {code!r}")
        state.health = [h for h in state.health if h not in gone]
        return gone

    return store.update_goal(goal_id, change)


def list_findings(store: Store, goal_id: str | None = None) -> list[dict[str, Any]]:
    """Every recorded finding (of one goal, or all goals), with its goal id; unreadable goals skipped."""
    registry = store.read_registry()
    goals = [require_goal(registry, goal_id).goal_id] if goal_id is not None else list(registry.goals)
    rows = []
    for g in goals:
        try:
            state = store.read_goal(g)
        except (StateInvalidError, NotFoundError):
            if goal_id is not None:
                raise
            continue
        rows += [{"goal_id": g, **h.dump()} for h in state.health]
    return rows


# -- heartbeats ------------------------------------------------------------------------------


def heartbeat_path(root: Path, agent_id: str) -> Path:
    """`.loopx/heartbeats/<agent>.json`."""
    return root / STATE_DIR / HEARTBEATS / f"{check_id('agent', agent_id)}.json"


def beat(root: Path, agent_id: str, at: datetime) -> None:
    """Record that the agent's heartbeat ran at `at`; never raises (an observation, not state).

    The time is the record's modification time (`os.utime`: one metadata write, ~20 us, where
    rewriting a file costs milliseconds); the file itself only names the agent.
    """
    with contextlib.suppress(OSError, UsageError, OverflowError, ValueError):
        path = heartbeat_path(root, agent_id)
        stamp = at.timestamp()
        try:
            os.utime(path, (stamp, stamp))
            return
        except FileNotFoundError:
            if not (root / STATE_DIR).is_dir():
                return
        path.parent.mkdir(exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"schema_version": 1, "agent_id": agent_id}) + "\n")
        os.utime(tmp, (stamp, stamp))
        os.replace(tmp, path)


def last_beat(root: Path, agent_id: str) -> datetime | None:
    """The agent's last recorded heartbeat, or None."""
    try:
        return datetime.fromtimestamp(heartbeat_path(root, agent_id).stat().st_mtime, UTC)
    except (OSError, UsageError, OverflowError, ValueError):
        return None


# -- liveness ----------------------------------------------------------------------------------


class Liveness(NamedTuple):
    """One agent's liveness: its cadence, when it was last seen and by what, and the verdict."""

    agent_id: str
    cadence_minutes: float | None
    last_seen: datetime | None
    seen_by: str
    status: Literal["live", "stalled", "paused", "unjudged"]
    """`unjudged`: no cadence recorded; `paused`: its heartbeat is paused or all its goals ended."""
    silent_minutes: float | None

    def to_json(self) -> dict[str, Any]:
        """As JSON data."""
        return {
            "agent_id": self.agent_id,
            "status": self.status,
            "cadence_minutes": self.cadence_minutes,
            "last_seen": iso(self.last_seen) if self.last_seen else None,
            "seen_by": self.seen_by,
            "silent_minutes": round(self.silent_minutes, 1) if self.silent_minutes is not None else None,
        }


def _signs(store: Store, registry: Registry) -> tuple[dict[str, list[tuple[datetime, str]]], set[str]]:
    """Every agent's signs of life in the store, and the agents with nothing to beat for: every
    heartbeat of theirs the host paused, or every goal they showed life in no longer active."""
    signs: dict[str, list[tuple[datetime, str]]] = {a: [] for a in registry.agents}
    paused: dict[str, bool] = {}
    working: dict[str, bool] = {}
    for goal_id, goal in registry.goals.items():
        before = {a: len(s) for a, s in signs.items()}
        with contextlib.suppress(StateInvalidError, NotFoundError):
            for agent_id, entry in store.read_scheduler(goal_id).agents.items():
                for at, what in ((entry.acked_at, "scheduler ack"), (entry.failed_at, "scheduler failure")):
                    if at is not None and agent_id in signs:
                        signs[agent_id].append((at, what))
                paused[agent_id] = paused.get(agent_id, True) and entry.paused
        with contextlib.suppress(StateInvalidError, NotFoundError):
            for run in store.read_history(goal_id, last=HISTORY_LOOKBACK):
                if run.agent_id in signs:
                    signs[run.agent_id].append((_time(run.at), "settled turn"))
        with contextlib.suppress(StateInvalidError, NotFoundError, UsageError):
            for agent_id, key in store.read_goal(goal_id).open_turns.items():
                if agent_id in signs:
                    signs[agent_id].append((store.read_journal(goal_id, key).updated_at, "turn journal"))
        for agent_id, count in before.items():
            if len(signs[agent_id]) > count:  # the agent works on this goal
                working[agent_id] = working.get(agent_id, False) or goal.status == "active"
    idle = {a for a, p in paused.items() if p} | {a for a, w in working.items() if not w}
    return signs, idle


def _time(value: object) -> datetime:
    from loopx_core.clock import parse_time

    return value if isinstance(value, datetime) else parse_time(str(value))


def liveness(store: Store, now: datetime) -> list[Liveness]:
    """Every registered agent's liveness, by id."""
    registry = store.read_registry()
    signs, paused = _signs(store, registry)
    active = any(g.status == "active" for g in registry.goals.values())
    rows = []
    for agent_id, agent in sorted(registry.agents.items()):
        seen = [*signs[agent_id], (agent.updated_at, "registration")]
        beat_at = last_beat(store.root, agent_id)
        if beat_at is not None:
            seen.append((beat_at, "heartbeat"))
        last, by = max(seen, key=lambda s: s[0])
        silent = max(0.0, (now - last).total_seconds() / 60)
        cadence = agent.cadence_minutes
        if cadence is None:
            status = "unjudged"
        elif agent_id in paused or not active:
            status = "paused"
        else:
            status = "stalled" if silent > STALL_CADENCES * cadence else "live"
        rows.append(Liveness(agent_id, cadence, last, by, status, silent))  # type: ignore[arg-type]
    return rows
