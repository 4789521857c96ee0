"""What each page shows: read-only projections of the store, computed by the engine's own functions.

The attention queue is `loopx status`'s (`status.attention`), liveness is `loopx health
list`'s, a turn is shown only through the journal inspection projection
(`kernel.inspection.inspect`), quota through the quota engine: the dashboard never
recomputes a rule the CLI applies, so the two cannot disagree.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, cast

from loopx_core.clock import iso
from loopx_core.dashboard.charts import QuotaChart, quota_chart
from loopx_core.dashboard.watch import Tokens
from loopx_core.decide.assess import assess
from loopx_core.decide.packet import load_inputs
from loopx_core.decide.scope import lease_live, ordered, scope_refusal
from loopx_core.errors import LoopxError, NotFoundError
from loopx_core.ids import is_valid_id
from loopx_core.kernel.inspection import inspect
from loopx_core.models.records import GoalState, LedgerEvent, Registry, Todo
from loopx_core.ops.health import last_beat, liveness
from loopx_core.status import WHO_ACTS, attention
from loopx_core.store.base import Store

TIMELINE_TURNS = 20
"""Turns (and runs) shown on a goal page, newest first."""
BOARD_COLUMNS = ("open", "claimed", "done", "blocked")


@dataclass(frozen=True)
class Ask:
    """An ask_owner: an open todo needing capabilities no registered agent that may take it has."""

    todo_id: str
    title: str
    required: tuple[str, ...]
    missing: tuple[str, ...]
    candidates: tuple[str, ...]
    """Agents that may take the todo (a grant to one of them unblocks it)."""


def owner_asks(state: GoalState, registry: Registry, now: datetime) -> list[Ask]:
    """The goal's ask_owner todos, in run order (what the capability gate asks the owner)."""
    asks = []
    for todo in ordered(state.todos):
        if todo.kind != "agent" or not todo.is_open_work or not todo.required_capabilities:
            continue
        workers = [
            a
            for a in registry.agents.values()
            if not a.monitor_only and scope_refusal(todo, a.agent_id, now) in (None, "claimed_by_other")
        ]
        need = set(todo.required_capabilities)
        if any(need <= set(a.capabilities) for a in workers):
            continue
        have = set().union(*(set(a.capabilities) for a in workers)) if workers else set()
        asks.append(
            Ask(
                todo.todo_id,
                todo.title,
                tuple(todo.required_capabilities),
                tuple(sorted(need - have)) or tuple(sorted(need)),
                tuple(sorted(a.agent_id for a in workers)),
            )
        )
    return asks


def _agents_of(state: GoalState) -> set[str]:
    """Agents working this goal now: holding a claim or an open turn."""
    return {t.claimed_by for t in state.todos if t.claimed_by} | set(state.open_turns)


KEPT = frozenset({"registry", "goal", "scheduler", "history"})
"""What a page may keep (with the ledger's tail, `PageReads.ledger_since`): what a goal's token
covers exactly on every store. Journals and runs are many, rewritten in place by many paths,
and a page reads few of them (open turns, the last 20): they are read by each page."""


class ReadCache:
    """Records earlier pages read, each kept while its goal's (or the registry's) token stays.

    A page takes the store's `Tokens` first and reads after, so a record written between the
    two is kept under the old token and read again by the next page: never shown stale past a
    change. Goals without a token (a plugin's store) are read by every page.
    """

    def __init__(self) -> None:
        self.tokens = Tokens(None, {})
        self.entries: dict[tuple[object, ...], tuple[object, object]] = {}

    def renew(self, tokens: Tokens) -> Tokens:
        """Start a page at `tokens`: forget what belongs to a goal that changed or went."""
        if tokens.registry != self.tokens.registry:
            self.entries = {k: v for k, v in self.entries.items() if k[1] is not None}
        moved = {g for g, t in self.tokens.goals.items() if tokens.goals.get(g) != t}
        if moved:
            self.entries = {k: v for k, v in self.entries.items() if k[1] not in moved}
        self.tokens = tokens
        return tokens


class PageReads:
    """A read-only view of a store for one page: each record is read (and validated) once.

    The attention queue, liveness and the page's own extras all read the same goal states;
    within one page render they share one read, and with a `ReadCache` later pages share it
    while the goal is unchanged. Writes are not offered: a page never writes.
    """

    def __init__(self, store: Store, cache: ReadCache | None = None, tokens: Tokens | None = None) -> None:
        self._store = store
        self.root = store.root
        self.label = store.label
        self._page: dict[tuple[object, ...], object] = {}
        self._kept = cache.entries if cache is not None and tokens is not None else None
        self._tokens = tokens

    def _token(self, goal_id: str | None) -> object:
        """The token reads of `goal_id` (None: the registry) may be kept by; None: not kept."""
        if self._tokens is None or goal_id in self._tokens.racy:
            return None
        return self._tokens.registry if goal_id is None else self._tokens.goals.get(goal_id)

    def _once(self, key: tuple[object, ...], read: Any) -> Any:
        """`read()` once per page (errors too), and across pages while the key's goal is unchanged.

        `key[1]` is the goal the record belongs to (None: the registry).
        """
        if key not in self._page:
            token = self._token(key[1]) if key[0] in KEPT else None  # type: ignore[arg-type]
            kept = self._kept.get(key) if self._kept is not None and token is not None else None
            if kept is not None and kept[0] == token:
                self._page[key] = kept[1]
            else:
                try:
                    self._page[key] = value = read()
                except LoopxError as exc:
                    self._page[key] = exc
                else:
                    if self._kept is not None and token is not None:
                        self._kept[key] = (token, value)
        value = self._page[key]
        if isinstance(value, LoopxError):
            raise value
        return value

    def read_registry(self) -> Registry:
        """The registry."""
        return self._once(("registry", None), self._store.read_registry)

    def read_goal(self, goal_id: str) -> GoalState:
        """A goal's state."""
        return self._once(("goal", goal_id), lambda: self._store.read_goal(goal_id))

    def read_scheduler(self, goal_id: str) -> Any:
        """A goal's scheduler state."""
        return self._once(("scheduler", goal_id), lambda: self._store.read_scheduler(goal_id))

    def read_history(self, goal_id: str, *, last: int | None = None) -> Any:
        """A goal's run history (per `last`)."""
        return self._once(("history", goal_id, last), lambda: self._store.read_history(goal_id, last=last))

    def read_journal(self, goal_id: str, turn_key: str) -> Any:
        """A turn journal (read by each page: a goal's token does not cover its journals)."""
        return self._once(("journal", goal_id, turn_key), lambda: self._store.read_journal(goal_id, turn_key))

    def read_run(self, goal_id: str, run_id: str) -> dict[str, Any]:
        """One run's record (read by each page, as journals are)."""
        return self._once(("run", goal_id, run_id), lambda: self._store.read_run(goal_id, run_id))

    def ledger_since(self, goal_id: str, since: datetime) -> list[LedgerEvent]:
        """The ledger tail from `since`: a kept tail read from no later than `since` is filtered.

        The clock only moves forward, so each page's window starts at or after the last one's.
        """
        kept = self._kept.get(("ledger", goal_id)) if self._kept is not None else None
        token = self._token(goal_id)
        if kept is not None and token is not None and kept[0] == token:
            start, events = cast(tuple[datetime, list[LedgerEvent]], kept[1])
            if since >= start:
                return events[bisect_left(events, since, key=lambda e: e.at) :]
        events = self._store.ledger_since(goal_id, since)
        if self._kept is not None and token is not None:
            self._kept[("ledger", goal_id)] = (token, (since, events))
        return events


def page_reads(store: Store, cache: ReadCache | None = None, tokens: Tokens | None = None) -> Store:
    """`store` seen through one page's `PageReads` (typed as the store it stands for, reads only)."""
    return cast(Store, PageReads(store, cache, tokens))


# -- attention queue -------------------------------------------------------------------------------


def attention_page(
    store: Store, now: datetime, *, cache: ReadCache | None = None, tokens: Tokens | None = None
) -> dict[str, Any]:
    """Every goal in the attention order, with open gates, asks, stalled loops and heartbeats.

    `cache`, `tokens`: reads earlier pages made, kept while their goal's token is unchanged.
    """
    store = page_reads(store, cache, tokens)
    registry = store.read_registry()
    rows = attention(store, now)
    agents = [row.to_json() for row in liveness(store, now)]
    for agent in agents:
        beat = last_beat(store.root, agent["agent_id"])
        agent["last_heartbeat"] = iso(beat) if beat else None
    stalled = {a["agent_id"] for a in agents if a["status"] == "stalled"}
    gates: list[dict[str, Any]] = []
    asks: list[dict[str, Any]] = []
    for row in rows:
        row.update(open_gates=0, asks=0, stalled_agents=[], high_findings=0, readable=True)
        try:
            state = store.read_goal(row["goal_id"])
        except LoopxError:
            row["readable"] = False
            continue
        open_gates = [g for g in state.gates if g.status == "open"]
        row["open_gates"] = len(open_gates)
        row["high_findings"] = sum(1 for h in state.health if h.severity == "high")
        row["stalled_agents"] = sorted(_agents_of(state) & stalled)
        gates += [{"goal_id": row["goal_id"], **g.dump()} for g in open_gates]
        goal_asks = owner_asks(state, registry, now) if row["state"] != "done" else []
        row["asks"] = len(goal_asks)
        asks += [{"goal_id": row["goal_id"], **a.__dict__} for a in goal_asks]
    return {
        "store": store.label,
        "now": iso(now),
        "goals": rows,
        "gates": gates,
        "asks": asks,
        "stalled": [a for a in agents if a["status"] == "stalled"],
        "agents": agents,
        "counts": {
            "goals": len(rows),
            "owner": sum(1 for r in rows if r["who_acts"] == "owner"),
            "gates": len(gates),
            "stalled": len(stalled),
        },
    }


# -- one goal ----------------------------------------------------------------------------------


@dataclass
class Card:
    """A todo on the board."""

    todo: Todo
    agent: str | None
    lease_expires_at: str | None
    lease_live: bool


@dataclass
class Board:
    """A goal's todos by column (open / claimed / done / blocked), each in run order."""

    columns: dict[str, list[Card]] = field(default_factory=lambda: {c: [] for c in BOARD_COLUMNS})


def board(state: GoalState, now: datetime) -> Board:
    """The todos as a board: by status (deferred shown with blocked), priority first."""
    b = Board()
    for todo in ordered(state.todos):
        column = "blocked" if todo.status == "deferred" else todo.status
        b.columns[column].append(
            Card(
                todo,
                todo.claimed_by or todo.bound_agent,
                iso(todo.lease_expires_at) if todo.lease_expires_at else None,
                lease_live(todo, now),
            )
        )
    return b


def require_goal_id(goal_id: str) -> str:
    """A goal id from a URL; anything that is not an id is simply not a goal (404)."""
    if not is_valid_id(goal_id):
        raise NotFoundError("no such goal (ids are a-z 0-9 . _ -)")
    return goal_id


def goal_page(
    store: Store,
    goal_id: str,
    now: datetime,
    *,
    cache: ReadCache | None = None,
    tokens: Tokens | None = None,
) -> dict[str, Any]:
    """One goal: its state and reason, quota chart, board, gates, health, asks, turns and runs."""
    store = page_reads(store, cache, tokens)
    registry = store.read_registry()
    goal = registry.goals.get(require_goal_id(goal_id))
    if goal is None:
        raise NotFoundError(f"goal {goal_id!r} not found")
    inputs = load_inputs(store, goal_id, None, now, registry=registry)
    a = assess(inputs)
    state_name, who, reason = a.state, WHO_ACTS[a.state], a.reason
    if goal.status == "done":
        state_name, who, reason = "done", "nobody", "goal done (terminal closeout)"
    usage = inputs.usage
    chart: QuotaChart | None = quota_chart(usage) if usage is not None else None
    released = usage.released_at() if usage is not None else None
    state = inputs.state
    data: dict[str, Any] = {
        "store": store.label,
        "now": iso(now),
        "goal": goal,
        "state_name": state_name,
        "who_acts": who,
        "reason": reason,
        "health_error": inputs.health_error,
        "next_eligible_at": iso(a.next_eligible_at) if a.next_eligible_at else None,
        "spent_slots": usage.spent_slots if usage else None,
        "allowed_slots": usage.allowed_slots if usage else goal.quota.allowed_slots,
        "released_at": iso(released) if released else None,
        "chart": chart,
        "state": state,
        "board": board(state, now) if state else None,
        "gates": [g for g in state.gates if g.status == "open"] if state else [],
        "resolved_gates": [g for g in state.gates if g.status != "open"][-5:] if state else [],
        "asks": owner_asks(state, registry, now) if state and goal.status != "done" else [],
        "agents": sorted(registry.agents),
        "turns": [],
        "runs": [],
        "history_error": None,
    }
    if state is not None:
        try:
            data["turns"], data["runs"] = timeline(store, goal_id, state)
        except LoopxError as exc:  # a damaged run index: the rest of the page still shows
            data["history_error"] = exc.message
    return data


def _inspected(store: Store, goal_id: str, agent_id: str, turn_key: str) -> dict[str, Any]:
    """A turn as the inspection projection shows it (or why it cannot be read)."""
    try:
        journal = store.read_journal(goal_id, turn_key)
    except LoopxError as exc:
        return {"error": exc.message}
    return inspect(journal, goal_id=goal_id, agent_id=agent_id, turn_key=turn_key)


def trace_url(trace: str | None) -> str | None:
    """The link to a run's trace: `LOOPX_TRACE_URL` with `{trace_id}` filled in (http or https
    only; None without a trace or a usable template)."""
    import os

    template = os.environ.get("LOOPX_TRACE_URL", "")
    if not trace or "{trace_id}" not in template or not template.startswith(("http://", "https://")):
        return None
    return template.replace("{trace_id}", trace)


def timeline(
    store: Store, goal_id: str, state: GoalState
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The turn timeline (open turns, then settled ones newest first) and the run history.

    An unreadable run index is its `LoopxError` (the page shows it in place of both).
    """
    entries = list(reversed(store.read_history(goal_id, last=TIMELINE_TURNS)))
    turns: list[dict[str, Any]] = []
    settled = {e.turn_key for e in entries}
    for agent_id, key in sorted(state.open_turns.items()):
        if key not in settled:
            turns.append({"agent_id": agent_id, "turn_key": key, "at": None, "todo_id": None, "open": True})
    for entry in entries:
        turns.append(
            {
                "agent_id": entry.agent_id,
                "turn_key": entry.turn_key,
                "at": entry.at,
                "todo_id": entry.todo_id,
                "open": entry.turn_key in state.open_turns.values(),
                "validation": entry.validation,
                "progress": entry.progress,
            }
        )
    for turn in turns:
        turn["inspection"] = _inspected(store, goal_id, turn["agent_id"], turn["turn_key"])
    runs = []
    for entry in entries:
        run: dict[str, Any] = entry.dump(exclude={"schema_version"})
        run["trace_url"] = trace_url(entry.trace_id)
        try:
            record = store.read_run(goal_id, entry.run_id)
        except LoopxError as exc:
            run.update(evidence=[], changed_files=[], record_error=exc.message)
        else:
            run.update(
                summary=str(record.get("summary", entry.summary)),
                evidence=[str(e) for e in record.get("evidence") or []],
                changed_files=[str(f) for f in record.get("changed_files") or []],
            )
        runs.append(run)
    return turns, runs


# -- agents and hosts --------------------------------------------------------------------------


def agents_page(
    store: Store,
    now: datetime,
    *,
    facades: list[dict[str, Any]] | None = None,
    cache: ReadCache | None = None,
    tokens: Tokens | None = None,
) -> dict[str, Any]:
    """Every agent: capabilities, host, cadence, liveness, last heartbeat and current turn."""
    reads = page_reads(store, cache, tokens)
    registry = reads.read_registry()
    live = {row.agent_id: row.to_json() for row in liveness(reads, now)}
    current: dict[str, list[dict[str, Any]]] = {a: [] for a in registry.agents}
    for goal_id in registry.goals:
        try:
            state = reads.read_goal(goal_id)
        except LoopxError:
            continue
        for agent_id, key in sorted(state.open_turns.items()):
            if agent_id in current:
                current[agent_id].append(
                    {
                        "goal_id": goal_id,
                        "turn_key": key,
                        "inspection": _inspected(reads, goal_id, agent_id, key),
                    }
                )
    rows = []
    for agent_id, agent in sorted(registry.agents.items()):
        beat = last_beat(store.root, agent_id)
        rows.append(
            {
                "agent": agent,
                "liveness": live.get(agent_id, {}),
                "last_heartbeat": iso(beat) if beat else None,
                "turns": current[agent_id],
            }
        )
    return {
        "store": store.label,
        "now": iso(now),
        "agents": rows,
        "facades": facades if facades is not None else installed_facades(store),
    }


def installed_facades(store: Store) -> list[dict[str, Any]]:
    """Each installed host facade and its `--check` status (what `loopx doctor` checks).

    Reads doctor's rows by position and ignores any it adds (a row grew a layout once and the
    page broke), and a host plugin that fails (third-party code) is one row in error, never a
    page in error.
    """
    from loopx_core.doctor.installation import check_installation, installed

    try:
        found = installed(store.root)
        findings = check_installation(store.root, mcp=False)
    except LoopxError as exc:
        return [_facade_error(exc.message)]
    except Exception as exc:  # a host plugin's own failure: shown, not raised
        return [_facade_error(f"a host plugin failed: {type(exc).__name__}")]
    rows = []
    for row in found:
        host, scope, command = str(row[0]), str(row[1]), row[3] if len(row) > 3 else None
        layout = str(row[4]) if len(row) > 4 and row[4] else "default"
        problems = [f for f in findings if f.subject.get("host") == host and f.subject.get("scope") == scope]
        rows.append(
            {
                "host": host,
                "scope": scope if layout == "default" else f"{scope} ({layout})",
                "command": command or "loopx",
                "status": "drift" if problems else "ok",
                "detail": "; ".join(f.message for f in problems) or "matches what LoopX would write",
            }
        )
    return rows


def _facade_error(detail: str) -> dict[str, Any]:
    return {"host": "-", "scope": "-", "command": "-", "status": "error", "detail": detail}
