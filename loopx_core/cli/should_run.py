"""`loopx quota should-run`: the hot path, shared by the typer command and the fast entry.

Imports only what the decision needs: no typer, jinja2, tomlkit, mcp or plugins unless a
`--surface` asks a host plugin for hints.
"""

from __future__ import annotations

import sys

from loopx_core.cli.output import dumps, reporting
from loopx_core.errors import ExitCode


def run_should_run(
    root: str | None,
    goal_id: str,
    agent_id: str,
    capabilities: list[str] | None,
    surface: str | None,
    fmt: str,
    *,
    current_rrule: str | None = None,
) -> int:
    """Print the packet; exit 0, or 4 (state invalid) when the packet is `blocked_health`."""
    with reporting(fmt):
        from loopx_core.clock import now
        from loopx_core.host_hints import hint_contributors
        from loopx_core.ops.tick import tick_packet
        from loopx_core.store.choice import open_for_tick
        from loopx_core.store.roots import find_root_text

        packet = tick_packet(
            open_for_tick(find_root_text(root)),  # a file store's lean reads on string paths: no pathlib
            goal_id,
            agent_id,
            now(),
            available_capabilities=tuple(capabilities) if capabilities else None,
            surface=surface,
            current_rrule=current_rrule,
            contributors=hint_contributors(surface),
        )
        if fmt == "json":
            sys.stdout.write(dumps(packet) + "\n")
        else:
            from loopx_core.render import packet_markdown

            sys.stdout.write(packet_markdown(packet))
        if packet["quota"]["state"] == "blocked_health":
            return int(ExitCode.STATE_INVALID)
    return 0
