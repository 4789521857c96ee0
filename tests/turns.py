"""Helpers for settlement tests: a project with one begun turn, built through the real operations."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from loopx_core.models.records import TurnJournal
from loopx_core.ops import goals, todos
from loopx_core.settlement.steps import TurnContext
from loopx_core.settlement.turns import begin_turn
from loopx_core.store.files import FileStore
from tests.conftest import T0


@dataclass
class Turn:
    """A begun turn and the context to settle it."""

    store: FileStore
    journal: TurnJournal

    @property
    def key(self) -> str:
        """The turn key."""
        return self.journal.turn_key

    def ctx(self, **changes: object) -> TurnContext:
        """A settlement context for this turn (validation passes unless changed)."""
        base: dict[str, object] = {"summary": "did it", "evidence": ["tests pass"], "validation_passed": True}
        base.update(changes)
        return TurnContext(self.store, "g", "builder", self.key, lambda: T0, **base)  # type: ignore[arg-type]

    def spends(self) -> list:  # type: ignore[type-arg]
        """Spend events of this turn in the ledger."""
        instance = self.journal.identity["turn_instance_id"]
        return [e for e in self.store.ledger_all("g") if e.kind == "spend" and e.turn_instance_id == instance]

    def runs(self) -> list[str]:
        """Run index lines."""
        index = self.store.runs_dir("g") / "index.jsonl"
        return index.read_text().splitlines() if index.exists() else []


def begun_turn(root: Path, *, todos_count: int = 1, compute: float = 1.0) -> Turn:
    """Goal g, agents builder and other, `todos_count` todos, and builder's turn begun on t1."""
    store = FileStore(root)
    store.init()
    goals.add_goal(store, "g", "Objective", T0, compute=compute)
    goals.register_agent(store, "builder", [], T0)
    goals.register_agent(store, "other", [], T0)
    for n in range(todos_count):
        todos.add_todo(store, "g", f"Todo {n + 1}", T0)
    journal, _ = begin_turn(store, "g", "builder", T0, todo_id="t1")
    return Turn(store, journal)
