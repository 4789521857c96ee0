"""The host's own hints in a should-run packet, for the adapters that build packets (CLI, MCP).

Outside the `hosts` package on purpose: `should-run` without `--surface` loads no host code at
all, and with one it asks the lean registry of the built-in hosts (`hosts.builtin`) first,
pluggy's only when another distribution declares LoopX plugins (or on any doubt).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Packet = dict[str, Any]


def hint_contributors(surface: str | None) -> tuple[Callable[[Packet], None], ...]:
    """Host plugins' packet hints for `surface`; plugins load only when a surface is named."""
    if not surface:
        return ()
    from loopx_core.hosts.builtin import every_host

    builtin = every_host()  # only LoopX's own plugins installed: no pluggy, no entry-point scan
    if builtin is not None:
        host = builtin.get(surface)
        if host is None:
            return ()  # as pluggy's registry answers a surface no host has
        from loopx_core.hosts.rules import merge_hints

        return (lambda packet: merge_hints(host, packet),)
    from loopx_core.hosts.manager import get_plugin_manager, packet_hints  # plugins load only here

    pm = get_plugin_manager()
    return (lambda packet: packet_hints(pm, surface, packet),)
