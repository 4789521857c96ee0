"""The installed distributions and their entry points, read as importlib.metadata reads them, without it.

importlib.metadata (with `email`, `zipfile`, `csv`) costs more than a hook itself. `scan(path)`
makes one pass over the folders of `path`: every `*.dist-info` / `*.egg-info` folder, in
importlib.metadata's order, with its normalized name and its entry points by group, read from
`entry_points.txt` as importlib.metadata's Sectioned reading does. It answers None wherever
importlib.metadata might read otherwise: a zip or an egg on the path, an unreadable folder or
file, a file it would refuse (not UTF-8, a line without `=` in a group), a folder whose name
gives no distribution name (importlib.metadata would read its METADATA). `other_finder()` says
whether a metadata finder other than the standard one may know distributions no scan sees.
The lean host registry (hosts/builtin.py) and pydantic's plugin-loader stand-in
(models/plugin_loader.py) both read through it; tests/adversarial/test_distribution_scan.py
checks it against importlib.metadata on generated site folders.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING: collections.abc is an import a hook need not pay for
if TYPE_CHECKING:
    from collections.abc import Sequence

try:  # importlib.machinery's PathFinder itself: the importlib package would load warnings on every hook
    from _frozen_importlib_external import PathFinder
except ImportError:  # pragma: no cover - an interpreter without the frozen bootstrap
    from importlib.machinery import PathFinder

Groups = dict[str, list[tuple[str, str]]]
"""One distribution's entry points: each group it declares (even with no entry), its (name, value) pairs."""
_SUFFIXES = (".dist-info", ".egg-info")


def other_finder() -> bool:
    """True when a finder on `sys.meta_path` other than the standard one may find distributions."""
    return any(
        getattr(finder, "find_distributions", None) is not None and finder is not PathFinder
        for finder in sys.meta_path
    )


def scan(path: Sequence[object]) -> list[tuple[str, Groups]] | None:
    """Every distribution in the folders of `path`, in `importlib.metadata.distributions()`'s order:
    its normalized name and its entry points by group; None for anything it may read otherwise."""
    found: list[tuple[str, Groups]] = []
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
        # importlib.metadata's Lookup: a folder's distributions grouped by name, first seen first
        by_name: dict[str, list[Groups]] = {}
        for child in children:
            # Most names are not metadata folders: a one-character test first (this runs for every
            # name in every folder of sys.path, on every hook).
            if child[-1:] not in "oO" or child[-5:].lower() != "-info":
                continue
            low = child.lower()
            if not low.endswith(_SUFFIXES):
                continue
            base = low.rpartition(".")[0]
            stem = base.partition("-")[0]
            if not stem or (stem[0] == "." and not base.strip(".")) or not child.endswith(_SUFFIXES):
                # importlib.metadata names such a distribution from its METADATA, not its folder
                # (os.path.splitext finds no lower-case suffix, or no name before it)
                return None
            groups = _entry_points(f"{prefix}{child}{os.sep}entry_points.txt")
            if groups is None:
                return None
            name = stem if stem.isalnum() else normalized(stem)
            if name in by_name:
                by_name[name].append(groups)
            else:
                by_name[name] = [groups]
        found.extend((name, groups) for name, every in by_name.items() for groups in every)
    return found


def normalized(name: str) -> str:
    """A distribution's name as importlib.metadata normalizes it (lower case, runs of `-_.` one `_`)."""
    name = name.lower()
    if name.isalnum():  # nothing to collapse (most names)
        return name
    # re.sub(r"[-_.]+", "-", name).replace("-", "_") without compiling a pattern on every hook
    name = name.replace("-", "_").replace(".", "_")
    while "__" in name:
        name = name.replace("__", "_")
    return name


def _entry_points(path: str) -> Groups | None:
    """The groups of one `entry_points.txt` ({} without the file); None when unsure."""
    try:  # os.open: most distributions have no entry_points.txt, and io.open costs more to fail
        fd = os.open(path, os.O_RDONLY)
    except (FileNotFoundError, NotADirectoryError):
        return {}
    except OSError:
        return None
    try:
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        data = b"".join(chunks)
    except OSError:  # a folder named entry_points.txt, among others
        return None
    finally:
        os.close(fd)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    # importlib.metadata's Sectioned reading: stripped lines, `#` comments, `[group]` headers
    # (a group counts even with no entry), `name = value` pairs (a line without `=` in a group
    # is an error for the whole file, and so for every entry-point lookup); lines before the
    # first header are skipped.
    groups: Groups = {}
    entries: list[tuple[str, str]] | None = None
    for line in (raw.strip() for raw in text.splitlines()):
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            entries = groups.setdefault(line.strip("[]"), [])
            continue
        if entries is None:
            continue
        name, equals, value = line.partition("=")
        if not equals:
            return None
        entries.append((name.strip(), value.strip()))
    return groups
