"""The host's own hints in a should-run packet, for the adapters that build packets (CLI, MCP).

Outside the `hosts` package on purpose: `should-run` without `--surface` loads no host code at
all; with a built-in host's surface, only that host's plugin loads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Packet = dict[str, Any]


def hint_contributors(surface: str | None) -> tuple[Callable[[Packet], None], ...]:
    """Host plugins' packet hints for `surface`; plugins load only when a surface is named."""
    if not surface:
        return ()
    from loopx_core.hosts.manager import get_plugin_manager, packet_hints

    pm = get_plugin_manager(surface=surface)
    return (lambda packet: packet_hints(pm, surface, packet),)
