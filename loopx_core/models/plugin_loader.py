"""pydantic's plugin loader without `importlib.metadata` when no distribution declares a plugin.

pydantic asks its plugin loader (`pydantic.plugin._loader.get_plugins`) at every validator it
builds; the loader imports `importlib.metadata` (with `email`, `zipfile`, `csv`) and scans every
distribution's entry points: about 15 ms of each settlement command's start, for none found.
`install()` reads the `entry_points.txt` files on `sys.path` itself, as importlib.metadata reads
them, and only when it is sure that none declares a `pydantic` entry point does it put a
stand-in for the loader in `sys.modules`, whose `get_plugins()` answers `()` as pydantic's
would. Anything it is not sure of (a zip or an egg on the path, another metadata finder, a file
it cannot read or that importlib.metadata would refuse, any `[pydantic]` section, the loader
already imported) leaves pydantic's own loader in place, which gives the same answer or its own
error. Only this process changes: nothing is written to the environment, so the validation
commands and notice sinks LoopX starts see pydantic as it is.
tests/adversarial/test_pydantic_plugin_loader.py checks it against importlib.metadata.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from importlib.machinery import PathFinder
from types import ModuleType
from typing import Any

from loopx_core.distributions import other_finder, scan

LOADER = "pydantic.plugin._loader"
GROUP = "pydantic"
"""pydantic's entry-point group (`PYDANTIC_ENTRY_POINT_GROUP`)."""


def install() -> bool:
    """Put the stand-in loader in `sys.modules` when no plugin can be declared; True if it is there."""
    current = sys.modules.get(LOADER)
    if current is not None:
        return isinstance(current, StandIn)
    if os.environ.get("LOOPX_NO_FAST_PATH") or not sure_no_plugin(sys.path):
        return False
    sys.modules[LOADER] = StandIn(LOADER)
    return True


def sure_no_plugin(path: Sequence[object]) -> bool:
    """True when no distribution in the folders of `path` declares a `pydantic` entry point and
    importlib.metadata would read every one of their entry points without an error."""
    if other_finder():
        return False  # a finder that may know distributions this scan does not
    groups = declared_groups(path)
    return groups is not None and GROUP not in groups


def declared_groups(path: Sequence[object]) -> set[str] | None:
    """Every entry-point group declared by a distribution in the folders of `path` (`*.dist-info`,
    `*.egg-info`); None for anything importlib.metadata may read otherwise or refuse."""
    found = scan(path)
    return None if found is None else {group for _, groups in found for group in groups}


class StandIn(ModuleType):
    """`pydantic.plugin._loader` when no plugin is declared: `get_plugins()` finds none.

    Any other name loads pydantic's own loader in its place (a newer pydantic may ask for more).
    """

    @staticmethod
    def get_plugins() -> Iterable[Any]:
        """No plugins: what pydantic's loader returns when no distribution declares one."""
        return ()

    def __getattr__(self, name: str) -> Any:
        """pydantic's own loader's `name`, the real module taking the stand-in's place."""
        if name.startswith("__"):
            raise AttributeError(name)
        import importlib.util

        parent = importlib.import_module(LOADER.rpartition(".")[0])
        spec = PathFinder.find_spec(LOADER, parent.__path__)
        if spec is None or spec.loader is None:
            raise AttributeError(name)
        real = importlib.util.module_from_spec(spec)
        sys.modules[LOADER] = real
        spec.loader.exec_module(real)
        return getattr(real, name)
