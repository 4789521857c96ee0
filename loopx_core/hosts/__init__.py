"""The host toolkit: everything a host plugin imports, from one place.

    from loopx_core.hosts import Base, FacadeFile, Host, RenderContext, hookimpl

    class AcmeIde(Host):
        name = "acme-ide"
        ...

    @hookimpl
    def loopx_register_hosts(register):
        register(AcmeIde())

The entry-point group is `loopx`; docs/write-a-host-plugin.md walks through a plugin and
docs/hooks.md describes the hook and the `Host` methods. Importing this package loads no
template engine and no pluggy (`hookimpl` is pluggy's marker without pluggy, hosts/markers.py),
and each name loads its module on first use, so `loopx hook NAME` starts fast.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from typing import Any

    from loopx_core.hosts.hints import scheduler_hints
    from loopx_core.hosts.host import Host, PackageFolder
    from loopx_core.hosts.markers import hookimpl
    from loopx_core.hosts.model import (
        Base,
        FacadeFile,
        Finding,
        HookAnswer,
        HookCall,
        HostListing,
        HostSteps,
        RenderContext,
        Scope,
    )

_HOME = {
    "Base": "model",
    "FacadeFile": "model",
    "Finding": "model",
    "HookAnswer": "model",
    "HookCall": "model",
    "HostListing": "model",
    "HostSteps": "model",
    "RenderContext": "model",
    "Scope": "model",
    "Host": "host",
    "PackageFolder": "host",
    "hookimpl": "markers",
    "scheduler_hints": "hints",
}
"""Each public name and the module (of this package) it lives in."""

__all__ = [
    "Base",
    "FacadeFile",
    "Finding",
    "HookAnswer",
    "HookCall",
    "Host",
    "HostListing",
    "HostSteps",
    "PackageFolder",
    "RenderContext",
    "Scope",
    "hookimpl",
    "scheduler_hints",
]


def __getattr__(name: str) -> Any:
    """A public name, its module imported on first use (then kept in the package's globals)."""
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_load(f"{__name__}.{_HOME[name]}"), name)
    globals()[name] = value
    return value


def _load(module: str) -> object:
    """`importlib.import_module(module)` without the importlib package (it loads warnings)."""
    __import__(module)
    return sys.modules[module]
