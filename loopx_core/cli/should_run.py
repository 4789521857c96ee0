"""`loopx quota should-run`: the runner the typer command and the fast entry both call.

Imports only what the decision needs: no typer, jinja2, tomlkit, mcp or plugins unless a
`--surface` asks a host plugin for hints.
"""

from __future__ import annotations

import sys

from loopx_core.cli.output import dumps, reporting, resolve
from loopx_core.errors import ExitCode


def run_should_run(
    *,
    root: str | None,
    goal_id: str,
    agent_id: str,
    available_capability: list[str] | None = None,
    surface: str | None = None,
    current_rrule: str | None = None,
    fmt: str = "auto",
) -> int:
    """Print the packet (JSON, or its Markdown for people); exit 0, or 4 (state invalid) when the
    packet is `blocked_health`."""
    shown = "json" if resolve(fmt) == "json" else "markdown"  # `human` is the packet's Markdown
    with reporting(shown):
        from loopx_core.clock import now
        from loopx_core.host_hints import hint_contributors
        from loopx_core.ops.tick import tick_packet
        from loopx_core.store.choice import open_store
        from loopx_core.store.roots import find_root

        packet = tick_packet(
            open_store(find_root(root)),
            goal_id,
            agent_id,
            now(),
            available_capabilities=tuple(available_capability) if available_capability else None,
            surface=surface,
            current_rrule=current_rrule,
            contributors=hint_contributors(surface),
        )
        if shown == "json":
            sys.stdout.write(dumps(packet) + "\n")
        else:
            from loopx_core.render import packet_markdown

            sys.stdout.write(packet_markdown(packet))
        if packet["quota"]["state"] == "blocked_health":
            return int(ExitCode.STATE_INVALID)
    return 0
