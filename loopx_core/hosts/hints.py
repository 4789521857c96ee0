"""The scheduler protocol's hints for a should-run packet: the CLI args that ack or fail an rrule.

A host whose own scheduler runs the heartbeat (the Codex App's automations) returns these from
`Host.hints`: the heartbeat applies `scheduler_hint.recommended_rrule`, then runs the ack (or,
when the App refused, the failure) command. Hosts without a scheduler return no hints.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from typing import Any


def scheduler_hints(packet: dict[str, Any]) -> dict[str, Any] | None:
    """`ack_hint` and `failure_hint` CLI args for the packet's recommended rrule; None without one."""
    hint = packet.get("scheduler_hint")
    if not isinstance(hint, dict) or "recommended_rrule" not in hint:
        return None
    rrule = hint["recommended_rrule"]
    ids = ["--goal-id", packet["goal_id"], "--agent-id", packet["agent_id"]]
    schedule = ["--pause"] if rrule is None else ["--rrule", rrule]
    if hint.get("fingerprint"):
        schedule += ["--fingerprint", hint["fingerprint"]]
    return {
        "ack_hint": {"cli_args": ["quota", "scheduler-ack", *ids, *schedule]},
        "failure_hint": {"cli_args": ["quota", "scheduler-fail", *ids, "--error", "<error>"]},
    }
