"""The store interface: everything the engine, settlement, ops, the MCP server and hooks need.

`FileStore` (files under `.loopx/`) is the embedded default; `PostgresStore` (one
PostgreSQL database shared by several machines) implements exactly this protocol and passes
the same contract tests (tests/test_store_contract.py); `choice.open_store` picks one.
Every write is atomic; `update_*` and `append_event` serialise per goal (the registry has its
own lock); `goal_lock` is re-entrant in the holding thread and exclusive against every other thread and process.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable
    from contextlib import AbstractContextManager
    from datetime import datetime
    from pathlib import Path

    from loopx_core.models.records import (
        GoalState,
        LedgerEvent,
        Registry,
        RunIndexEntry,
        SchedulerState,
        TurnJournal,
    )

T = TypeVar("T")


class Store(Protocol):
    """Persistence for the registry, goal states, ledgers, journals, runs and scheduler state."""

    root: Path
    """The project folder (commands a turn runs start there)."""
    label: str
    """The store as packets and `loopx status` name it: `files`, or a redacted DSN."""

    # -- lifecycle
    def is_initialized(self) -> bool:
        """True when the store holds a registry."""
        ...

    def init(self) -> bool:
        """Create an empty registry; False (and nothing written) if one exists."""
        ...

    # -- registry
    def read_registry(self) -> Registry:
        """The registry, validated."""
        ...

    def update_registry(self, change: Callable[[Registry], T]) -> T:
        """Apply `change` to the registry under its lock and write it back atomically."""
        ...

    # -- goal state
    def read_goal(self, goal_id: str) -> GoalState:
        """A goal's state, validated."""
        ...

    def create_goal(self, state: GoalState) -> None:
        """Write a new goal's first state; `ConflictError` if it has one."""
        ...

    def update_goal(
        self, goal_id: str, change: Callable[[GoalState], T], *, expect_version: int | None = None
    ) -> T:
        """Compare-and-swap a goal's state under its lock; the version increments."""
        ...

    def goal_lock(self, goal_id: str) -> AbstractContextManager[None]:
        """The goal's lock, for changes spanning several records."""
        ...

    # -- ledger and receipts
    def append_event(
        self, goal_id: str, build: Callable[[int, LedgerEvent | None], LedgerEvent]
    ) -> LedgerEvent:
        """Append the event `build(next_seq, last_event)` returns, under the goal lock."""
        ...

    def ledger_since(self, goal_id: str, since: datetime) -> list[LedgerEvent]:
        """Ledger events at or after `since`, oldest first."""
        ...

    def ledger_all(self, goal_id: str) -> list[LedgerEvent]:
        """The whole ledger, oldest first."""
        ...

    def spend_receipt(self, goal_id: str, turn_instance_id: str) -> LedgerEvent | None:
        """The spend already charged for this turn instance, however long ago."""
        ...

    def void_receipt(self, goal_id: str, event_id: str) -> LedgerEvent | None:
        """The void already recorded for `event_id`."""
        ...

    # -- turn journals
    def read_journal(self, goal_id: str, turn_key: str) -> TurnJournal:
        """A turn journal (missing: `NotFoundError`; malformed: `StateInvalidError`)."""
        ...

    def has_journal(self, goal_id: str, turn_key: str) -> bool:
        """True when the turn has a journal (open or a tombstone)."""
        ...

    def read_journals(self, goal_id: str) -> list[TurnJournal]:
        """Every journal of the goal, by turn key (a malformed one: `StateInvalidError`)."""
        ...

    def write_journal(self, journal: TurnJournal) -> None:
        """Write a journal atomically (goal lock held)."""
        ...

    # -- runs
    def run_indexed(self, goal_id: str, run_id: str) -> bool:
        """True when the run history lists `run_id`."""
        ...

    def record_run(self, goal_id: str, record: dict[str, Any], markdown: str, entry: RunIndexEntry) -> None:
        """Store a run record and add `entry` to the history once."""
        ...

    def read_history(self, goal_id: str, *, last: int | None = None) -> list[RunIndexEntry]:
        """The run history (only its `last` entries if given), oldest first."""
        ...

    def read_run(self, goal_id: str, run_id: str) -> dict[str, Any]:
        """One run's full record (summary, evidence, changed files, progress)."""
        ...

    # -- scheduler
    def read_scheduler(self, goal_id: str) -> SchedulerState:
        """The goal's scheduler state (empty if no host reported yet)."""
        ...

    def write_scheduler(self, state: SchedulerState) -> None:
        """Write the goal's scheduler state (goal lock held)."""
        ...
