"""The host's own hints in a should-run packet, for the adapters that build packets (CLI, MCP).

Outside the `hosts` package on purpose: importing that package loads pluggy and the facade
model, which `should-run` without `--surface` must not pay for.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Packet = dict[str, Any]


def hint_contributors(surface: str | None) -> tuple[Callable[[Packet], None], ...]:
    """Host plugins' packet hints for `surface`; plugins load only when a surface is named."""
    if not surface:
        return ()
    from loopx_core.hosts.manager import get_plugin_manager, packet_hints  # plugins load only here

    pm = get_plugin_manager()
    return (lambda packet: packet_hints(pm, surface, packet),)
