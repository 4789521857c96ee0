"""The plugin manager and the host registry: hosts from the `loopx` entry-point group, built-ins included.

`LOOPX_PLUGINS` chooses which entry points load: a comma-separated list of names selects
only those (`LOOPX_PLUGINS=claude-code,dsh`); names prefixed with `-` are blocked and the
rest load (`LOOPX_PLUGINS=-dsh`). Unset or empty: every plugin loads.

pluggy loads the entry points and keeps their distributions; every hook is called through
`pm.hook`. The core then dispatches by host name: `host(pm, NAME)` is the only object asked
about `NAME`, so a plugin can never answer for another plugin's host. What both this registry and
the lean one for built-in hosts (hosts/builtin.py) apply lives in hosts/rules.py (`plugin_call`
is still importable from here).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pluggy

from loopx_core.errors import UsageError
from loopx_core.hosts import hookspecs
from loopx_core.hosts.host import Host
from loopx_core.hosts.model import Base
from loopx_core.hosts.rules import check_bases, merge_hints, plugin_call, selection, shape_problem

ENTRY_POINT_GROUP = "loopx"


@dataclass(frozen=True)
class Registered:
    """A host and where it came from: the plugin, its distribution and version, the entry point."""

    host: Host
    plugin: str
    distribution: str
    version: str
    source: str


def get_plugin_manager(
    *, load_entrypoints: bool = True, plugins: Iterable[tuple[str, object]] = ()
) -> pluggy.PluginManager:
    """A fresh manager: the hook spec added, entry points loaded (as `LOOPX_PLUGINS` allows), checked."""
    pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    try:
        if load_entrypoints:
            selected, blocked = selection()
            for name in blocked:
                pm.set_blocked(name)
            for name in selected or [None]:  # type: ignore[list-item]
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
    """Plugin object id -> (distribution, version, source) for plugins pluggy loaded from entry points."""
    found = {}
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
