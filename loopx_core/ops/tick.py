"""What every heartbeat tick records besides its packet: the agent's heartbeat, the owner's notice.

Shared by every path that builds a should-run packet for a host (the should-run command, the
host hooks, the MCP tool), so an agent is seen alive and the owner told the same way
whichever protocol its host speaks. Neither record touches goal state or the ledger, and
neither ever fails the tick.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from loopx_core.decide.packet import build_packet, load_inputs

if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime

    from loopx_core.decide.assess import Inputs
    from loopx_core.store.base import Store


def tick_packet(
    store: Store,
    goal_id: str,
    agent_id: str | None,
    now: datetime,
    *,
    available_capabilities: tuple[str, ...] | None = None,
    surface: str | None = None,
    current_rrule: str | None = None,
    contributors: tuple[Callable[[dict[str, Any]], None], ...] = (),
) -> dict[str, Any]:
    """The should-run packet for a host's tick, with the tick observed (heartbeat, owner notice)."""
    inputs = load_inputs(
        store,
        goal_id,
        agent_id,
        now,
        available_capabilities=available_capabilities,
        surface=surface,
        current_rrule=current_rrule,
    )
    packet = build_packet(inputs, contributors=contributors)
    observe_tick(store.root, inputs, packet)
    return packet


def observe_tick(root: Path | str, inputs: Inputs, packet: dict[str, Any]) -> None:
    """Record the asking agent's heartbeat (if it has a cadence) and queue the notice the packet calls for.

    The notice modules load only for a packet that needs the owner, a throttled goal or a
    finished one (docs/notices.md).
    """
    agent = inputs.agent
    if agent is not None and agent.cadence_minutes is not None:
        from loopx_core.ops.health import beat  # only agents with a cadence are judged alive

        beat(Path(root), agent.agent_id, inputs.now)
    done = inputs.goal is not None and inputs.goal.status == "done"
    if (
        packet["interaction_contract"]["user_channel"]["notify"]
        or packet["quota"]["state"] == "throttled"
        or done
    ):
        from loopx_core.notices.triggers import queue_for_packet  # the notice modules, only when needed

        queue_for_packet(Path(root), packet, inputs.goal, inputs.state, inputs.now)
