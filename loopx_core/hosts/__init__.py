"""The host toolkit: everything a host plugin imports, from one place.

    from loopx_core.hosts import Base, FacadeFile, Host, RenderContext, hookimpl

    class AcmeIde(Host):
        name = "acme-ide"
        ...

    @hookimpl
    def loopx_register_hosts(register):
        register(AcmeIde())

The entry-point group is `loopx`; docs/write-a-host-plugin.md walks through a plugin and
docs/hooks.md describes the hook and the `Host` methods.
"""

from __future__ import annotations

from loopx_core.hosts.hints import scheduler_hints
from loopx_core.hosts.hookspecs import hookimpl
from loopx_core.hosts.host import Host, PackageFolder
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
