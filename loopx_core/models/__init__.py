"""Pydantic models of every file LoopX keeps under `.loopx/`, each with `schema_version`."""

from loopx_core.models.common import SCHEMA_VERSION, Id, StrictModel
from loopx_core.models.goal import Gate, GoalState, HealthFinding, Todo, WaitingOn
from loopx_core.models.ledger import LedgerEvent
from loopx_core.models.registry import AgentEntry, GoalEntry, QuotaPolicy, Registry

__all__ = [
    "SCHEMA_VERSION",
    "AgentEntry",
    "Gate",
    "GoalEntry",
    "GoalState",
    "HealthFinding",
    "Id",
    "LedgerEvent",
    "QuotaPolicy",
    "Registry",
    "StrictModel",
    "Todo",
    "WaitingOn",
]
