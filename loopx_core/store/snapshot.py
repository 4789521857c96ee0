"""A whole store's state in canonical form: what `loopx store migrate` copies and verifies.

Every document is held as its validated model, every ledger event and history line as the
canonical line the file store writes, so two stores holding the same state have the same
counts and the same checksum whatever engine keeps them. Derived data (the file store's
receipt index and lock files) and the machine's own files (`.loopx/store.json`, host hook
state, installer manifests) are not part of a store's state.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from loopx_core.models import codec
from loopx_core.models.records import (
    GoalState,
    LedgerEvent,
    Registry,
    RunIndexEntry,
    SchedulerState,
    TurnJournal,
)


def event_line(event: LedgerEvent) -> str:
    """The ledger line of an event, as the file store appends it."""
    return codec.line(event, exclude_none=True).decode()


def history_line(entry: RunIndexEntry) -> str:
    """The history line of a run, as the file store appends it."""
    return codec.line(entry).decode()


def document(record: GoalState | Registry | SchedulerState | TurnJournal) -> str:
    """A document in its canonical (compact) form."""
    return codec.line(record).decode()


def record_json(record: dict[str, Any]) -> str:
    """A run record as compact JSON (key order kept)."""
    return json.dumps(record, ensure_ascii=False)


@dataclass
class GoalDump:
    """One goal's records."""

    state: GoalState | None = None
    events: list[LedgerEvent] = field(default_factory=list)
    journals: dict[str, TurnJournal] = field(default_factory=dict)
    """Turn key -> journal."""
    runs: dict[str, tuple[dict[str, Any], str]] = field(default_factory=dict)
    """Run id -> (record, Markdown)."""
    history: list[RunIndexEntry] = field(default_factory=list)
    scheduler: SchedulerState | None = None


@dataclass
class Snapshot:
    """A store's whole state."""

    registry: Registry | None = None
    goals: dict[str, GoalDump] = field(default_factory=dict)

    @property
    def is_empty(self) -> bool:
        """True when there is no registry and no goal record."""
        return self.registry is None and not self.goals

    def counts(self) -> dict[str, int]:
        """How many records of each kind."""
        dumps = list(self.goals.values())
        return {
            "registry": int(self.registry is not None),
            "goals": sum(d.state is not None for d in dumps),
            "events": sum(len(d.events) for d in dumps),
            "journals": sum(len(d.journals) for d in dumps),
            "runs": sum(len(d.runs) for d in dumps),
            "history": sum(len(d.history) for d in dumps),
            "schedulers": sum(d.scheduler is not None for d in dumps),
        }

    def checksum(self) -> str:
        """sha256 over every record in canonical form and order."""
        digest = hashlib.sha256()

        def add(kind: str, text: str) -> None:
            digest.update(kind.encode() + b"\0" + text.encode() + b"\n")

        if self.registry is not None:
            add("registry", document(self.registry))
        for goal_id in sorted(self.goals):
            dump = self.goals[goal_id]
            add("goal", goal_id)
            if dump.state is not None:
                add("state", document(dump.state))
            for event in dump.events:
                add("event", event_line(event))
            for key in sorted(dump.journals):
                add("journal", document(dump.journals[key]))
            for run_id in sorted(dump.runs):
                record, markdown = dump.runs[run_id]
                add("run", record_json(record))
                add("markdown", markdown)
            for entry in dump.history:
                add("history", history_line(entry))
            if dump.scheduler is not None:
                add("scheduler", document(dump.scheduler))
        return digest.hexdigest()
