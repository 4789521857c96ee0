"""The store interface: what the engine needs from persistence.

`FileStore` is the embedded default; the interface leaves room for a shared,
server-backed store for teams on several machines.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Protocol, TypeVar

from loopx_core.models import GoalState, LedgerEvent, Registry

T = TypeVar("T")


class Store(Protocol):
    """Persistence for the registry, goal states and ledgers, with atomic updates."""

    def read_registry(self) -> Registry:
        """The registry, validated."""
        ...

    def update_registry(self, change: Callable[[Registry], T]) -> T:
        """Apply `change` to the registry under its lock and write it back atomically."""
        ...

    def read_goal(self, goal_id: str) -> GoalState:
        """A goal's state, validated."""
        ...

    def update_goal(
        self, goal_id: str, change: Callable[[GoalState], T], *, expect_version: int | None = None
    ) -> T:
        """Compare-and-swap a goal's state under its lock; the version increments."""
        ...

    def append_event(
        self, goal_id: str, build: Callable[[int, LedgerEvent | None], LedgerEvent]
    ) -> LedgerEvent:
        """Append the event `build(next_seq, last_event)` returns, under the goal lock."""
        ...

    def ledger_since(self, goal_id: str, since: datetime) -> list[LedgerEvent]:
        """Ledger events at or after `since`, oldest first."""
        ...
