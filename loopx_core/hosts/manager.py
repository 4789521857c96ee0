"""The plugin manager and the host registry: hosts from the `loopx` entry-point group, built-ins included.

`LOOPX_PLUGINS` chooses which entry points load: a comma-separated list of names selects
only those (`LOOPX_PLUGINS=claude-code,dsh`); names prefixed with `-` are blocked and the
rest load (`LOOPX_PLUGINS=-dsh`). Unset or empty: every plugin loads.

LoopX's own plugins are registered from `BUILTIN` (the same names and modules its distribution
declares in that group), so a command about one built-in host (`loopx hook claude-stop`,
`should-run --surface codex-app`) loads that plugin alone and reads no distribution's
metadata; every other plugin comes from the entry points, through pluggy. Every hook is
called through `pm.hook`. The core then dispatches by host name: `host(pm, NAME)` is the only
object asked about `NAME`, so a plugin can never answer for another plugin's host.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import Any, NamedTuple

import pluggy

from loopx_core.errors import UsageError
from loopx_core.hosts import hookspecs
from loopx_core.hosts.host import Host
from loopx_core.hosts.model import Base
from loopx_core.hosts.rules import check_bases, merge_hints, plugin_call, selection, shape_problem

ENTRY_POINT_GROUP = "loopx"
BUILTIN = {
    "claude-code": "loopx_claude_code.plugin",
    "codex-app": "loopx_codex_app.plugin",
    "dsh": "loopx_dsh.plugin",
}
"""LoopX's own plugins: entry-point name -> module (pyproject.toml declares the same entry points)."""
BUILTIN_EVENTS = {"claude-session-start": "claude-code", "claude-stop": "claude-code"}
"""The `loopx hook` events of the built-in hosts, and the plugin that answers each."""


class Registered(NamedTuple):
    """A host and where it came from: the plugin, its distribution and version, the entry point."""

    host: Host
    plugin: str
    distribution: str
    version: str
    source: str


def get_plugin_manager(
    *,
    load_entrypoints: bool = True,
    plugins: Iterable[tuple[str, object]] = (),
    surface: str | None = None,
    event: str | None = None,
) -> pluggy.PluginManager:
    """A fresh manager: the hook spec added, plugins loaded (as `LOOPX_PLUGINS` allows), checked.

    `surface` (a host's name) or `event` (a `loopx hook` event) of a built-in host: that plugin
    alone is loaded, as no other plugin can declare that host or event.
    """
    pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    try:
        if load_entrypoints:
            selected, blocked = selection()
            for name in blocked:
                pm.set_blocked(name)
            only = surface if surface in BUILTIN else BUILTIN_EVENTS.get(event or "")
            for name, module in BUILTIN.items():
                wanted = (only is None or name == only) and (not selected or name in selected)
                if wanted and name not in blocked:
                    with plugin_call(f"plugin {name!r}", "loading"):
                        pm.register(importlib.import_module(module), name=name)
            for name in [] if only else selected or [None]:  # type: ignore[list-item]
                with plugin_call(
                    "a `loopx` entry-point plugin", "loading (block it with LOOPX_PLUGINS=-NAME)"
                ):
                    pm.load_setuptools_entrypoints(ENTRY_POINT_GROUP, name)
        for name, plugin in plugins:
            try:
                pm.register(plugin, name=name)
            except ValueError:  # the name, or the object, is registered already
                raise UsageError(
                    f"plugin {name!r} is registered twice (is it loaded from its entry point too?)"
                ) from None
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        raise UsageError(f"host plugin {exc.plugin_name!r} does not fit LoopX: {str(exc)[:200]}") from None
    for name, plugin in pm.list_name_plugin():
        try:
            hash(plugin)
        except TypeError:  # pluggy's subset callers (see `registry`) keep plugins in sets
            raise UsageError(
                f"host plugin {name!r} is a {type(plugin).__name__}: use a module or an object"
            ) from None
    return pm


def _origins(pm: pluggy.PluginManager) -> dict[int, tuple[str, str, str]]:
    """Plugin object id -> (distribution, version, source) for plugins loaded from entry points."""
    from loopx_core import __version__

    found = {}
    for name, module in BUILTIN.items():
        plugin = pm.get_plugin(name)
        if plugin is not None:
            found[id(plugin)] = ("loopx-kit", __version__, f"entry point {module}")
    for plugin, dist in pm.list_plugin_distinfo():
        name = pm.get_name(plugin)
        value = next(
            (ep.value for ep in dist.entry_points if ep.group == ENTRY_POINT_GROUP and ep.name == name), "?"
        )
        found[id(plugin)] = (dist.project_name, dist.version, f"entry point {value}")
    return found


def registry(pm: pluggy.PluginManager) -> dict[str, Registered]:
    """Every host the plugins register, by name, with the plugin and distribution providing it."""
    found: dict[str, Registered] = {}
    origins = _origins(pm)
    plugins = [(name, plugin) for name, plugin in pm.list_name_plugin() if plugin is not None]
    for name, plugin in plugins:
        # Ask one plugin at a time (through pm.hook's subset caller) to know who registered what.
        others = [p for _, p in plugins if p is not plugin]
        dist, version, source = origins.get(
            id(plugin), ("-", "-", f"registered in-process ({type(plugin).__name__})")
        )

        def register(
            host: Host, *, _plugin: str = name, _from: tuple[str, str, str] = (dist, version, source)
        ) -> None:
            if not isinstance(host, Host):
                raise UsageError(f"plugin {_plugin!r} registered {type(host).__name__}, not a Host")
            problem = shape_problem(host)
            if problem:
                raise UsageError(f"plugin {_plugin!r} registered a host whose {problem}")
            if host.name in found:
                raise UsageError(
                    f"host {host.name!r} is declared twice ({found[host.name].plugin} and {_plugin})"
                )
            found[host.name] = Registered(host, _plugin, _from[0], host.version or _from[1], _from[2])

        with plugin_call(f"plugin {name!r}", "loopx_register_hosts"):
            pm.subset_hook_caller("loopx_register_hosts", others)(register=register)
    check_bases({name: entry.host for name, entry in found.items()})
    return dict(sorted(found.items()))


def hosts(pm: pluggy.PluginManager) -> dict[str, Host]:
    """Every registered host, by name."""
    return {name: entry.host for name, entry in registry(pm).items()}


def host(pm: pluggy.PluginManager, name: str) -> Host:
    """One host, or a usage error listing the known ones."""
    known = hosts(pm)
    if name not in known:
        raise UsageError(
            f"unknown surface {name[:80]!r}; known: {', '.join(known) or 'none'} (see `loopx hosts list`)"
        )
    return known[name]


def declared_bases(pm: pluggy.PluginManager) -> list[Base]:
    """Every host's declared base folders (what the installer resolves and the manifest may name)."""
    return [base for h in hosts(pm).values() for base in h.bases]


def packet_hints(pm: pluggy.PluginManager, surface: str, packet: dict[str, Any]) -> None:
    """Merge the host's hints for `surface` into `packet["scheduler_hint"][surface_key]`."""
    known = hosts(pm)
    if surface in known:
        merge_hints(known[surface], packet)


def notice_sinks(pm: pluggy.PluginManager) -> list[Any]:
    """Every notice sink kind (`NoticeSink`) the plugins register: a broadcast, each may add some."""
    from loopx_core.notices.sinks import NoticeSink, scheme_of

    found: list[NoticeSink] = []

    def register(sink: NoticeSink) -> None:
        if not isinstance(sink, NoticeSink):
            raise UsageError(f"a plugin registered {type(sink).__name__}, not a NoticeSink")
        schemes = sink.schemes if isinstance(sink.schemes, tuple | list) else ()
        if not schemes or not all(isinstance(s, str) and scheme_of(f"{s}://") == s for s in schemes):
            raise UsageError(f"notice sink {type(sink).__name__} declares no valid lower-case URL schemes")
        found.append(sink)

    with plugin_call("a notice-sink plugin", "loopx_register_notice_sinks"):
        pm.hook.loopx_register_notice_sinks(register=register)
    return found


def events(pm: pluggy.PluginManager) -> dict[str, Host]:
    """Every `loopx hook EVENT` name, and the host that answers it."""
    found: dict[str, Host] = {}
    for h in hosts(pm).values():
        for event in h.events:
            if event in found:
                raise UsageError(f"hook event {event!r} is declared by both {found[event].name} and {h.name}")
            found[event] = h
    return dict(sorted(found.items()))
