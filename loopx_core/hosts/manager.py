"""The plugin manager: host plugins from the `loopx` entry-point group, built-ins included.

`LOOPX_PLUGINS` chooses which entry points load: a comma-separated list of names selects
only those (`LOOPX_PLUGINS=claude-code,dsh`); names prefixed with `-` are blocked and the
rest load (`LOOPX_PLUGINS=-dsh`). Unset or empty: every plugin loads.
"""

from __future__ import annotations

import importlib.metadata
import os
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

import pluggy

from loopx_core.errors import UsageError
from loopx_core.hosts import hookspecs
from loopx_core.hosts.model import HostSurface

ENTRY_POINT_GROUP = "loopx"
PLUGINS_ENV = "LOOPX_PLUGINS"


@dataclass(frozen=True)
class PluginOrigin:
    """Where a plugin came from: its distribution, version and entry point."""

    name: str
    distribution: str
    version: str
    source: str


def _selection() -> tuple[set[str], set[str]]:
    raw = [p.strip() for p in os.environ.get(PLUGINS_ENV, "").split(",") if p.strip()]
    blocked = {p[1:] for p in raw if p.startswith("-")}
    selected = {p for p in raw if not p.startswith("-")}
    return selected, blocked


def get_plugin_manager(
    *, load_entrypoints: bool = True, plugins: Iterable[tuple[str, object]] = ()
) -> pluggy.PluginManager:
    """A fresh manager: hook specs added, entry points loaded (as `LOOPX_PLUGINS` allows), checked."""
    pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    origins: dict[str, PluginOrigin] = {}
    if load_entrypoints:
        selected, blocked = _selection()
        for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            if ep.name in blocked or (selected and ep.name not in selected):
                pm.set_blocked(ep.name)
                continue
            if pm.get_plugin(ep.name) is not None or pm.is_blocked(ep.name):
                continue
            pm.register(ep.load(), name=ep.name)
            dist = ep.dist
            origins[ep.name] = PluginOrigin(
                ep.name, dist.name if dist else "?", dist.version if dist else "?", f"entry point {ep.value}"
            )
    for name, plugin in plugins:
        pm.register(plugin, name=name)
        origins[name] = PluginOrigin(name, "-", "-", f"registered in-process ({type(plugin).__name__})")
    pm.check_pending()
    pm.loopx_origins = origins  # type: ignore[attr-defined]
    return pm


def origin(pm: pluggy.PluginManager, plugin_name: str) -> PluginOrigin:
    """Where the named plugin came from."""
    origins: dict[str, PluginOrigin] = getattr(pm, "loopx_origins", {})
    return origins.get(plugin_name) or PluginOrigin(plugin_name, "-", "-", "registered in-process")


def hosts(pm: pluggy.PluginManager) -> dict[str, HostSurface]:
    """Every host surface the plugins declare, stamped with the plugin and version that provide it."""
    found: dict[str, HostSurface] = {}
    for impl in pm.hook.loopx_register_hosts.get_hookimpls():
        came_from = origin(pm, impl.plugin_name)

        def register(
            surface: HostSurface, *, _plugin: str = impl.plugin_name, _from: PluginOrigin = came_from
        ) -> None:
            if surface.name in found:
                raise UsageError(
                    f"host {surface.name!r} is declared twice ({found[surface.name].plugin} and {_plugin})"
                )
            found[surface.name] = replace(surface, plugin=_plugin, version=surface.version or _from.version)

        impl.function(register=register)
    return dict(sorted(found.items()))


def host(pm: pluggy.PluginManager, name: str) -> HostSurface:
    """One host surface, or a usage error listing the known ones."""
    known = hosts(pm)
    if name not in known:
        raise UsageError(
            f"unknown surface {name!r}; known: {', '.join(known) or 'none'} (see `loopx hosts list`)"
        )
    return known[name]


def packet_hints(pm: pluggy.PluginManager, surface: str, packet: dict[str, Any]) -> None:
    """Merge every plugin's hints for `surface` into `packet["scheduler_hint"][surface_key]`."""
    key = surface.replace("-", "_")
    for hints in pm.hook.loopx_packet_hints(host=surface, packet=packet):
        if hints:
            packet["scheduler_hint"].setdefault(key, {}).update(hints)


def hook_handlers(pm: pluggy.PluginManager) -> dict[str, Any]:
    """Every `loopx hook NAME` handler the plugins declare."""
    found: dict[str, Any] = {}

    def register(name: str, handler: Any) -> None:
        if name in found:
            raise UsageError(f"hook handler {name!r} is declared twice")
        found[name] = handler

    pm.hook.loopx_register_hook_handlers(register=register)
    return dict(sorted(found.items()))
