"""The built-in hosts without pluggy: the hot path's registry (`loopx hook NAME`, `heartbeat-prompt`).

pluggy's registry (hosts/manager.py) reads every distribution's metadata (importlib.metadata)
and imports every plugin, which costs more than the hook itself. When the installed `loopx`
entry points are exactly the built-in ones below, this module imports only the plugin that owns
the event or the host asked for and registers its hosts the way the registry does (same checks).

It answers only when it is sure it would find what pluggy's registry finds: `LOOPX_PLUGINS`
unset, no metadata finder but the standard one, every `entry_points.txt` on `sys.path` readable
as importlib.metadata reads it, and the `loopx` group holding these entry points and no other.
Otherwise (a third-party host plugin, a selection, an unknown name, a plugin that fails) it
returns None and the caller asks pluggy, which gives the full answer or the exact error.
`LOOPX_NO_FAST_PATH=1` turns it off with the lean parsers (cli/entry.py), so tests compare both.
tests/test_host_registry_lean.py checks these tables against pyproject.toml and the registry.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from importlib import import_module
from importlib.machinery import PathFinder

from loopx_core.hosts.host import Host
from loopx_core.hosts.markers import IMPL_ATTRIBUTE
from loopx_core.hosts.rules import check_bases, selection, shape_problem

GROUP = "loopx"
PLUGINS: dict[str, str] = {
    "claude-code": "loopx_claude_code.plugin",
    "codex-app": "loopx_codex_app.plugin",
    "dsh": "loopx_dsh.plugin",
}
"""The built-in entry points (pyproject.toml's `[project.entry-points.loopx]`): name -> module."""
HOSTS: dict[str, str] = {"claude-code": "claude-code", "codex-app": "codex-app", "dsh": "dsh"}
"""Each built-in host -> the entry point whose plugin registers it."""
EVENTS: dict[str, str] = {"claude-session-start": "claude-code", "claude-stop": "claude-code"}
"""Each built-in `loopx hook` event -> the host that answers it."""


def event_host(event: str) -> Host | None:
    """The host answering `loopx hook EVENT`, or None when pluggy's registry must be asked."""
    name = EVENTS.get(event)
    found = named_host(name) if name is not None else None
    return found if found is not None and event in found.events else None


def named_host(name: str) -> Host | None:
    """The built-in host `name`, or None when pluggy's registry must be asked."""
    plugin = HOSTS.get(name)
    hosts = plugin_hosts(plugin) if plugin is not None and only_builtins() else None
    return hosts.get(name) if hosts is not None else None


def every_host() -> dict[str, Host] | None:
    """Every built-in host by name (sorted, as the registry lists them), or None to ask pluggy."""
    if not only_builtins():
        return None
    found: dict[str, Host] = {}
    for plugin in PLUGINS:
        hosts = plugin_hosts(plugin)
        if hosts is None or found.keys() & hosts.keys():
            return None
        found.update(hosts)
    try:
        check_bases(found)
    except Exception:
        return None
    return dict(sorted(found.items()))


def plugin_hosts(plugin: str) -> dict[str, Host] | None:
    """The hosts the built-in `plugin` registers, checked as the registry checks them; None on any doubt."""
    found: dict[str, Host] = {}

    def register(host: Host) -> None:
        if not isinstance(host, Host) or shape_problem(host) or host.name in found:
            raise ValueError("not a host the registry takes")
        found[host.name] = host

    try:
        hook: Callable[..., object] = import_module(PLUGINS[plugin]).loopx_register_hosts
        if not isinstance(getattr(hook, IMPL_ATTRIBUTE, None), dict):
            return None
        hook(register=register)
        check_bases(found)
    except Exception:  # pluggy's registry reports it, with its own words
        return None
    return found if all(HOSTS.get(name) == plugin for name in found) else None


def only_builtins() -> bool:
    """Whether pluggy would load exactly the built-in entry points (and find no other plugin)."""
    selected, blocked = selection()
    if selected or blocked or os.environ.get("LOOPX_NO_FAST_PATH"):
        return False  # LOOPX_NO_FAST_PATH: everything the general way (tests compare both)
    if any(
        getattr(finder, "find_distributions", None) is not None and finder is not PathFinder
        for finder in sys.meta_path
    ):
        return False  # a finder that may know distributions this scan does not
    found = entry_points(sys.path)
    return found is not None and sorted(found) == sorted(PLUGINS.items())


def entry_points(path: Sequence[object]) -> list[tuple[str, str]] | None:
    """Every `loopx` entry point (name, value) of every distribution in the folders of `path`, as
    importlib.metadata finds them (`*.dist-info`, `*.egg-info`); None for anything it may read
    otherwise (a zip, an egg, a file it could not read)."""
    found: list[tuple[str, str]] = []
    for entry in path:
        if not isinstance(entry, str) or entry.lower().endswith(".egg"):
            return None
        folder = entry or "."
        try:
            children = os.listdir(folder)
        except FileNotFoundError:
            continue
        except OSError:  # a file (a zip importlib.metadata would open) or an unreadable folder
            return None
        for child in children:
            if not child.lower().endswith((".dist-info", ".egg-info")):
                continue
            group = _group(os.path.join(folder, child, "entry_points.txt"))
            if group is None:
                return None
            found += group
    return found


def _group(path: str) -> list[tuple[str, str]] | None:
    """The `loopx` entries of one `entry_points.txt` ([] without the file); None when unsure."""
    try:
        with open(path, "rb") as file:
            data = file.read()
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    # importlib.metadata's Sectioned reading: stripped lines, `#` comments, `[group]` headers,
    # `name = value` pairs (a line without `=` in a group is an error for the whole file).
    entries: list[tuple[str, str]] = []
    group: str | None = None
    for line in (raw.strip() for raw in text.splitlines()):
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            group = line.strip("[]")
            continue
        if group is None:
            continue
        name, equals, value = line.partition("=")
        if not equals:
            return None
        if group == GROUP:
            entries.append((name.strip(), value.strip()))
    return entries
