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
Otherwise (a third-party plugin, a selection, an unknown name, anything that raises) it returns
None and the caller asks pluggy, which gives the full answer or the exact error.
`LOOPX_NO_FAST_PATH=1` turns it off with the lean parsers (cli/entry.py), so tests compare both;
tests/test_host_registry_lean.py compares it with the registry.
"""

from __future__ import annotations

import os
import sys

from loopx_core.hosts.host import Host
from loopx_core.hosts.markers import HOOK_NAMES, IMPL_ATTRIBUTE
from loopx_core.hosts.rules import check_bases, selection, shape_problem

TYPE_CHECKING = False  # typing.TYPE_CHECKING: collections.abc is an import a hook need not pay for
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from types import ModuleType

try:  # importlib.machinery's PathFinder itself: the importlib package would load warnings on every hook
    from _frozen_importlib_external import PathFinder
except ImportError:  # pragma: no cover - an interpreter without the frozen bootstrap
    from importlib.machinery import PathFinder

GROUP = "loopx"
DISTRIBUTION = "loopx_kit"
"""LoopX's own distribution (pyproject.toml's project name, normalized as importlib.metadata does)."""


def plain_module(value: str) -> bool:
    """A dotted module name of ASCII identifiers, as `[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)*`
    fullmatches, without compiling a pattern on every hook (tests/adversarial/test_lean_name_checks.py)."""
    return value.isascii() and all(part.isidentifier() for part in value.split("."))


def event_host(event: str) -> Host | None:
    """The built-in host answering `loopx hook EVENT`, or None when pluggy's registry must be asked."""
    found = every_host()
    owners = [h for h in (found or {}).values() if event in h.events]
    return owners[0] if len(owners) == 1 else None


def named_host(name: str) -> Host | None:
    """The built-in host `name`, or None when pluggy's registry must be asked."""
    return (every_host() or {}).get(name)


def every_host() -> dict[str, Host] | None:
    """Every built-in host by name (sorted, as the registry lists them), or None to ask pluggy."""
    plugins = builtin_entry_points()
    if plugins is None:
        return None
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
    selected, blocked = selection()
    if selected or blocked or os.environ.get("LOOPX_NO_FAST_PATH"):
        return None  # LOOPX_NO_FAST_PATH: everything the general way (tests compare both)
    if any(
        getattr(finder, "find_distributions", None) is not None and finder is not PathFinder
        for finder in sys.meta_path
    ):
        return None  # a finder that may know distributions this scan does not
    found = distributions(sys.path)
    if found is None:
        return None
    ours = [entries for name, entries in found if name == DISTRIBUTION]
    if len(ours) != 1 or any(entries for name, entries in found if name != DISTRIBUTION):
        return None
    names = [name for name, _ in ours[0]]
    if len(names) != len(set(names)) or not all(plain_module(value) for _, value in ours[0]):
        return None  # pluggy would skip a repeated name; `module:attr` is loaded otherwise
    return [value for _, value in ours[0]]


def distributions(path: Sequence[object]) -> list[tuple[str, list[tuple[str, str]]]] | None:
    """Every distribution in the folders of `path` (`*.dist-info`, `*.egg-info`), in importlib.metadata's
    order: its normalized name and its `loopx` entry points (name, value). None for anything it
    may read otherwise (a zip, an egg, a file it could not read)."""
    found: list[tuple[str, list[tuple[str, str]]]] = []
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
        prefix = folder if folder.endswith(os.sep) else folder + os.sep  # os.path.join, once a folder
        for child in children:
            # Most names are not metadata folders: a one-character test first (this runs for every
            # name in every folder of sys.path, on every hook).
            if child[-1:] not in "oO" or child[-5:].lower() != "-info":
                continue
            low = child.lower()
            if not low.endswith((".dist-info", ".egg-info")):
                continue
            entries = _group(f"{prefix}{child}{os.sep}entry_points.txt")
            if entries is None:
                return None
            found.append((_normalized(low.rpartition(".")[0].partition("-")[0]), entries))
    return found


def _normalized(name: str) -> str:
    """A distribution's name as importlib.metadata normalizes it (runs of `-_.` are one `_`)."""
    if name.isalnum():  # nothing to collapse (most names)
        return name
    # re.sub(r"[-_.]+", "-", name).replace("-", "_") without compiling a pattern on every hook
    name = name.replace("-", "_").replace(".", "_")
    while "__" in name:
        name = name.replace("__", "_")
    return name


def entry_points(path: Sequence[object]) -> list[tuple[str, str]] | None:
    """Every `loopx` entry point (name, value) of every distribution in the folders of `path`."""
    found = distributions(path)
    return None if found is None else [entry for _, entries in found for entry in entries]


def _group(path: str) -> list[tuple[str, str]] | None:
    """The `loopx` entries of one `entry_points.txt` ([] without the file); None when unsure."""
    try:  # os.open: most distributions have no entry_points.txt, and io.open costs more to fail
        fd = os.open(path, os.O_RDONLY)
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError:
        return None
    try:
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        data = b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)
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
