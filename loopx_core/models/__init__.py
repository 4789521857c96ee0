"""Pydantic models of every file LoopX keeps under `.loopx/`, each with `schema_version`.

The names load on first use (PEP 562), so `loopx_core.models.lean` and
`loopx_core.models.identity` import without pydantic; `from loopx_core.models import Todo`
works as before and builds the pydantic models then.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from typing import Any

    from loopx_core.models.common import SCHEMA_VERSION, Id, StrictModel
    from loopx_core.models.goal import Gate, GoalState, HealthFinding, Todo, WaitingOn
    from loopx_core.models.journal import PhaseRecord, TurnJournal
    from loopx_core.models.ledger import LedgerEvent
    from loopx_core.models.registry import AgentEntry, GoalEntry, QuotaPolicy, Registry
    from loopx_core.models.runs import RunIndexEntry
    from loopx_core.models.scheduler import SchedulerEntry, SchedulerState

_HOMES = {
    "SCHEMA_VERSION": "common",
    "Id": "common",
    "StrictModel": "common",
    "Gate": "goal",
    "GoalState": "goal",
    "HealthFinding": "goal",
    "Todo": "goal",
    "WaitingOn": "goal",
    "LedgerEvent": "ledger",
    "PhaseRecord": "journal",
    "TurnJournal": "journal",
    "RunIndexEntry": "runs",
    "SchedulerEntry": "scheduler",
    "SchedulerState": "scheduler",
    "AgentEntry": "registry",
    "GoalEntry": "registry",
    "QuotaPolicy": "registry",
    "Registry": "registry",
}

__all__ = [
    "SCHEMA_VERSION",
    "AgentEntry",
    "Gate",
    "GoalEntry",
    "GoalState",
    "HealthFinding",
    "Id",
    "LedgerEvent",
    "PhaseRecord",
    "QuotaPolicy",
    "Registry",
    "RunIndexEntry",
    "SchedulerEntry",
    "SchedulerState",
    "StrictModel",
    "Todo",
    "TurnJournal",
    "WaitingOn",
]


def __getattr__(name: str) -> Any:
    """Load a model's module the first time one of its names is asked for."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_load(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def _load(module: str) -> object:
    """`importlib.import_module(module)` without the importlib package (it loads warnings)."""
    __import__(module)
    return sys.modules[module]
