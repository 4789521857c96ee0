"""The built-in hosts without pluggy: the hot path's registry (`loopx hook NAME`, `heartbeat-prompt`).

pluggy's registry (hosts/manager.py) reads every distribution's metadata through
importlib.metadata, which costs more than a hook itself. When the only `loopx` entry points on
`sys.path` are those of LoopX's own distribution (the built-in hosts), this module imports
their plugins in the same order, calls their `loopx_register_hosts` hook and applies the
registry's checks, without pluggy. It names no host: the entry points say which plugins exist.

It answers only when it is sure to find what pluggy's registry finds: `LOOPX_PLUGINS` unset, no
metadata finder but the standard one, every `entry_points.txt` on `sys.path` read as
importlib.metadata reads it, one LoopX distribution and no other declaring `loopx` entry
points, each plugin a module whose only marked hooks are plain implementations of LoopX's own.
A hook imports only the plugin that answers it: LoopX's distribution declares each built-in
plugin's events in a second group, `loopx.events` (event = plugin module); when that table names
the event's plugin, only that plugin is imported and registered. Without a sure table (none
installed, a name twice, a module that is no built-in plugin, a plugin not registering the
event) it imports every plugin, as before.
Otherwise (a third-party plugin, a selection, an unknown name, anything that raises) it returns
None and the caller asks pluggy, which gives the full answer or the exact error.
`LOOPX_NO_FAST_PATH=1` turns it off with the lean parsers (cli/entry.py), so tests compare both;
tests/test_host_registry_lean.py compares it with the registry.
"""

from __future__ import annotations

import os
import sys

from loopx_core.distributions import Groups, other_finder, scan
from loopx_core.hosts.host import Host
from loopx_core.hosts.markers import HOOK_NAMES, IMPL_ATTRIBUTE
from loopx_core.hosts.rules import check_bases, selection, shape_problem

TYPE_CHECKING = False  # typing.TYPE_CHECKING: collections.abc is an import a hook need not pay for
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from types import ModuleType

GROUP = "loopx"
EVENTS = "loopx.events"
"""The group naming, for each hook event of a built-in host, the plugin module that registers it."""
DISTRIBUTION = "loopx_kit"
"""LoopX's own distribution (pyproject.toml's project name, normalized as importlib.metadata does)."""


def plain_module(value: str) -> bool:
    """A dotted module name of ASCII identifiers, as `[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)*`
    fullmatches, without compiling a pattern on every hook (tests/adversarial/test_lean_name_checks.py)."""
    return value.isascii() and all(part.isidentifier() for part in value.split("."))


def event_host(event: str) -> Host | None:
    """The built-in host answering `loopx hook EVENT`, or None when pluggy's registry must be asked."""
    groups = _ours()
    plugins = None if groups is None else _plugins(groups)
    if groups is None or plugins is None:
        return None
    module = _event_plugin(groups, plugins, event)
    if module is not None:  # only the plugin the events table names
        owners = [h for h in (_hosts([module]) or {}).values() if event in h.events]
        if len(owners) == 1:
            return owners[0]
    owners = [h for h in (_hosts(plugins) or {}).values() if event in h.events]
    return owners[0] if len(owners) == 1 else None


def event_plugin(event: str) -> str | None:
    """The one plugin module `event_host(event)` imports, when the events table is sure; else None."""
    groups = _ours()
    plugins = None if groups is None else _plugins(groups)
    return None if groups is None or plugins is None else _event_plugin(groups, plugins, event)


def named_host(name: str) -> Host | None:
    """The built-in host `name`, or None when pluggy's registry must be asked."""
    return (every_host() or {}).get(name)


def every_host() -> dict[str, Host] | None:
    """Every built-in host by name (sorted, as the registry lists them), or None to ask pluggy."""
    plugins = builtin_entry_points()
    return None if plugins is None else _hosts(plugins)


def _hosts(plugins: list[str]) -> dict[str, Host] | None:
    """The hosts the plugin modules `plugins` register, checked as the registry checks them; None when unsure."""
    found: dict[str, Host] = {}

    def register(host: Host) -> None:
        if not isinstance(host, Host) or shape_problem(host) or host.name in found:
            raise ValueError("not a host the registry takes")
        found[host.name] = host

    try:
        for module in plugins:
            hook = _register_hook(_imported(module))
            if hook is None:
                return None
            hook(register=register)
        check_bases(found)
    except Exception:  # pluggy's registry reports it, in its own words
        return None
    events = [event for h in found.values() for event in h.events]
    return dict(sorted(found.items())) if len(events) == len(set(events)) else None


def _imported(name: str) -> ModuleType:
    """`importlib.import_module(name)` for an absolute name, without the importlib package."""
    __import__(name)
    return sys.modules[name]


def _register_hook(module: ModuleType) -> Callable[..., object] | None:
    """The module's `loopx_register_hosts`, when pluggy would take it as the lean path calls it."""
    for name, value in vars(module).items():
        options = getattr(value, IMPL_ATTRIBUTE, None) if callable(value) else None
        if options is not None and name not in HOOK_NAMES:
            return None  # pluggy refuses an implementation of no hook
    hook = getattr(module, "loopx_register_hosts", None)
    options = getattr(hook, IMPL_ATTRIBUTE, None)
    if not isinstance(options, dict) or any(options.get(k) for k in ("wrapper", "hookwrapper", "specname")):
        return None
    return hook


def builtin_entry_points() -> list[str] | None:
    """The plugin modules pluggy would load, in its order, when they are all LoopX's own; else None."""
    groups = _ours()
    return None if groups is None else _plugins(groups)


def _ours() -> Groups | None:
    """The entry points of LoopX's own distribution, when it is the only one declaring `loopx` ones
    (or `loopx.events` ones) and the scan is sure of what pluggy's loading would find; else None."""
    selected, blocked = selection()
    if selected or blocked or os.environ.get("LOOPX_NO_FAST_PATH"):
        return None  # LOOPX_NO_FAST_PATH: everything the general way (tests compare both)
    if other_finder():
        return None  # a finder that may know distributions this scan does not
    found = scan(sys.path)
    if found is None:
        return None
    ours = [groups for name, groups in found if name == DISTRIBUTION]
    if len(ours) != 1 or any(
        groups.get(GROUP) or groups.get(EVENTS) for name, groups in found if name != DISTRIBUTION
    ):
        return None
    return ours[0]


def _plugins(groups: Groups) -> list[str] | None:
    """The `loopx` entry points' modules, in pluggy's order, when each is a plain module named once."""
    entries = groups.get(GROUP, [])
    names = [name for name, _ in entries]
    if len(names) != len(set(names)) or not all(plain_module(value) for _, value in entries):
        return None  # pluggy would skip a repeated name; `module:attr` is loaded otherwise
    return [value for _, value in entries]


def _event_plugin(groups: Groups, plugins: list[str], event: str) -> str | None:
    """The plugin module the `loopx.events` table names for `event`: one of `plugins`, the event named once."""
    table = groups.get(EVENTS)
    if not table:
        return None
    named = [value for name, value in table if name == event]
    return named[0] if len(named) == 1 and named[0] in plugins else None


def entry_points(path: Sequence[object]) -> list[tuple[str, str]] | None:
    """Every `loopx` entry point (name, value) of every distribution in the folders of `path`."""
    found = scan(path)
    return None if found is None else [entry for _, groups in found for entry in groups.get(GROUP, [])]
