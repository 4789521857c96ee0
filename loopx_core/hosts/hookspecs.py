"""LoopX's hook specification (pluggy project name `loopx`): hooks that register hosts and notice sinks.

Host plugins implement it with `@loopx_core.hosts.hookimpl` (hosts/markers.py: pluggy's marker
without pluggy, so a host module loads no pluggy) and are found through the `loopx` entry-point
group, built-in hosts included:

    [project.entry-points.loopx]
    my-host = "my_package.plugin"

Everything a host does is a method of its `Host` object, which LoopX calls for that host only;
a hook is kept only where every plugin must be asked (docs/hooks.md says why).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pluggy

from loopx_core.hosts.markers import PROJECT_NAME, hookimpl

if TYPE_CHECKING:
    from loopx_core.hosts.host import Host
    from loopx_core.notices.sinks import NoticeSink

__all__ = ["PROJECT_NAME", "hookimpl", "hookspec", "loopx_register_hosts", "loopx_register_notice_sinks"]

hookspec = pluggy.HookspecMarker(PROJECT_NAME)


@hookspec
def loopx_register_hosts(register: Callable[[Host], None]) -> None:
    """Declare hosts: call `register(MyHost())` once per host the plugin provides."""


@hookspec
def loopx_register_notice_sinks(register: Callable[[NoticeSink], None]) -> None:
    """Declare notice sink kinds: call `register(MySink())` once per kind (its URL schemes) provided."""
