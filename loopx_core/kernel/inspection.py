"""Read-only inspection of a turn journal: the allowlisted `loopx_turn_journal_inspection_v0`.

`inspect` projects a journal onto the inspection through the effect lens: never bodies,
paths or credentials.
"""

from __future__ import annotations

from typing import Any

from loopx_core.effects.lens import interpret_turn_journal
from loopx_core.models.records import TurnJournal

INSPECTION_SCHEMA = "loopx_turn_journal_inspection_v0"


def inspect(journal: TurnJournal, *, goal_id: str, agent_id: str, turn_key: str) -> dict[str, Any]:
    """The allowlisted inspection projection of a journal, through the effect lens."""
    turn = interpret_turn_journal(journal, goal_id=goal_id, agent_id=agent_id, turn_key=turn_key)
    c = turn.request.context
    return {
        "schema": INSPECTION_SCHEMA,
        "decision": turn.observation.decision,
        "journal_status": c["journal_status"],
        "replay_legal": c["replay_legal"],
        "goal_matches": c["goal_matches"],
        "owner_matches": c["owner_matches"],
        "turn_key_matches": c["turn_key_matches"],
        "phases_form_ordered_prefix": c["phases_form_ordered_prefix"],
        "completed_phases": list(c["completed_phases"]),
        "tombstone_retained": c["tombstone_retained"],
        "violations": list(c["violations"]),
        "effects": [],
    }


def inspection_markdown(p: dict[str, Any]) -> str:
    """The inspection projection for people: the same allowlisted facts."""

    def yn(value: bool) -> str:
        return "yes" if value else "no"

    lines = [
        f"# Turn journal: {p['decision']}",
        "",
        f"- status: {p['journal_status']} (tombstone retained: {yn(p['tombstone_retained'])})",
        f"- replay legal: {yn(p['replay_legal'])}",
        f"- goal matches: {yn(p['goal_matches'])}; owner matches: {yn(p['owner_matches'])}; "
        f"turn key matches: {yn(p['turn_key_matches'])}",
        f"- phases form an ordered prefix: {yn(p['phases_form_ordered_prefix'])}",
        f"- completed phases: {', '.join(p['completed_phases']) or 'none'}",
        f"- violations: {', '.join(p['violations']) or 'none'}",
        "- effects: none (inspection grants no authority)",
    ]
    return "\n".join(lines) + "\n"
