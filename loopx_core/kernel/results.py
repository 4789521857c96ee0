"""The turn result packet (`loopx_turn_result_v0`): what a turn did and what it still needs.

A pure function of the journal: the CLI adapter, the MCP server, the driver and should-run
(for an agent's open turn) all print the same packet; its next CLI actions are read
through the effect lens.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loopx_core import commands
from loopx_core.effects import TURN_RESULT_SCHEMA
from loopx_core.kernel.algebra import SettlementResult
from loopx_core.models.constants import PHASES

if TYPE_CHECKING:
    from typing import Any

    from loopx_core.models.records import TurnJournal

BASE_PLAN = ["validation", "durable_writeback", "quota_spend"]


def remaining_phases(journal: TurnJournal) -> list[str]:
    """The phases still to do, in order: host phases, then the planned settlement steps."""
    if journal.status not in ("open", "failed"):
        return []
    wanted = ["host_execute", "typed_result", *journal.plan]
    done = set(journal.completed())
    return [p for p in PHASES if p in wanted and p not in done]


def turn_result(
    journal: TurnJournal,
    result: SettlementResult | None = None,
    *,
    adapter: str = "cli",
    todo_done: bool = False,
) -> dict[str, Any]:
    """The `loopx_turn_result_v0` packet, with next CLI actions read through the lens.

    `todo_done`: the turn's todo is already complete (`turn run-once` completes it), so no
    action asks for it again."""
    identity = journal.identity
    remaining = remaining_phases(journal)
    phase = remaining[0] if remaining else None
    packet: dict[str, Any] = {
        "schema": TURN_RESULT_SCHEMA,
        "adapter": adapter,
        "goal_id": journal.goal_id,
        "agent_id": journal.agent_id,
        "todo_id": identity.get("todo_id"),
        "replan_obligation_id": identity.get("replan_obligation_id"),
        "turn_key": journal.turn_key,
        "status": journal.status,
        "plan": list(journal.plan),
        "completed_phases": journal.completed(),
        "next_phase": phase,
        "remaining_phases": remaining,
        "receipts": [r.to_json() for r in result.receipts] if result else [],
        "effects": list(result.effects) if result else [],
        "failure": result.failure.to_json() if result and result.failure else journal.failure,
    }
    if remaining:
        packet["execution_mode"] = "serial"  # each phase settled before the next one starts
    packet["summary"] = _summary(packet)
    packet["next_cli_actions"] = _actions(journal, phase, todo_done)
    return packet


def _summary(p: dict[str, Any]) -> str:
    if p["failure"]:
        return f"refused: {p['failure']['kind']} at {p['failure']['step']}"
    if p["status"] == "committed":
        return "turn settled"
    return f"turn {p['status']}; next: {p['next_phase'] or 'nothing'}"


def _actions(journal: TurnJournal, phase: str | None, todo_done: bool = False) -> list[str]:
    """Every command the turn still needs, in order (the host runs them one after another)."""
    g, a, k = journal.goal_id, journal.agent_id, journal.turn_key
    todo = journal.identity.get("todo_id")
    closeout = "terminal_closeout" in journal.plan
    actions = []
    if phase in ("host_execute", "typed_result", "validation", "durable_writeback"):
        actions.append(commands.writeback(g, a, k))
    if phase in ("host_execute", "typed_result", "validation", "durable_writeback", "quota_spend"):
        actions.append(commands.spend(g, a, k))
    if todo and closeout and journal.status != "stopped":
        if phase is not None:
            actions.append(
                commands.command(
                    "todo", "complete", "--no-follow-up", goal_id=g, todo_id=todo, agent_id=a, turn_key=k
                )
            )
    elif todo and not todo_done and journal.status in ("open", "failed", "committed"):
        actions.append(commands.complete(g, a, todo))
    return actions
