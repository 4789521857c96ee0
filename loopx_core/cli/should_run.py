"""`loopx quota should-run`: the hot path, shared by the typer command and the fast entry.

Imports only what the decision needs: no typer, jinja2, tomlkit, mcp or plugins unless a
`--surface` asks a host plugin for hints.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loopx_core.cli.output import Format, dumps, reporting
from loopx_core.errors import ExitCode

if TYPE_CHECKING:
    from loopx_core.decide.assess import Inputs


def run_should_run(
    root: str | None,
    goal_id: str,
    agent_id: str,
    capabilities: list[str] | None,
    surface: str | None,
    fmt: Format,
    *,
    current_rrule: str | None = None,
) -> int:
    """Print the packet; exit 0, or 4 (state invalid) when the packet is `blocked_health`."""
    with reporting(fmt):
        from loopx_core.clock import now
        from loopx_core.decide.packet import build_packet, load_inputs
        from loopx_core.store.choice import open_store
        from loopx_core.store.files import find_root

        project = find_root(root)
        inputs = load_inputs(
            open_store(project),
            goal_id,
            agent_id,
            now(),
            available_capabilities=tuple(capabilities) if capabilities else None,
            surface=surface,
            current_rrule=current_rrule,
        )
        from loopx_core.host_hints import hint_contributors

        packet = build_packet(inputs, contributors=hint_contributors(surface))
        if fmt is Format.json:
            sys.stdout.write(dumps(packet) + "\n")
        else:
            from loopx_core.render import packet_markdown

            sys.stdout.write(packet_markdown(packet))
        _observe(project, inputs, packet)
        if packet["quota"]["state"] == "blocked_health":
            return int(ExitCode.STATE_INVALID)
    return 0


def _observe(root: Path, inputs: Inputs, packet: dict[str, Any]) -> None:
    """The tick's side records, never failing it: the agent's heartbeat, the owner's notice.

    Neither touches goal state or the ledger. The notice modules load only for a packet that
    needs the owner, a throttled goal or a finished one (docs/notices.md).
    """
    agent = inputs.agent
    if agent is not None and agent.cadence_minutes is not None:
        from loopx_core.ops.health import beat

        beat(root, agent.agent_id, inputs.now)
    done = inputs.goal is not None and inputs.goal.status == "done"
    if (
        packet["interaction_contract"]["user_channel"]["notify"]
        or packet["quota"]["state"] == "throttled"
        or done
    ):
        from loopx_core.notices.triggers import queue_for_packet

        queue_for_packet(root, packet, inputs.goal, inputs.state, inputs.now)
