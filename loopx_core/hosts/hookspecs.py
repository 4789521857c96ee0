"""LoopX's hook specification (pluggy project name `loopx`): hooks that register hosts and notice sinks.

Host plugins implement it with `@loopx_core.hosts.hookimpl` and are found through the `loopx`
entry-point group (LoopX's own plugins are listed in `hosts.manager.BUILTIN` too, so a hook of
a built-in host loads only that plugin):

    [project.entry-points.loopx]
    my-host = "my_package.plugin"

Everything a host does is a method of its `Host` object, which LoopX calls for that host only;
a hook is kept only where every plugin must be asked (docs/hooks.md says why).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pluggy


if TYPE_CHECKING:
    from loopx_core.hosts.host import Host
    from loopx_core.notices.sinks import NoticeSink

__all__ = ["PROJECT_NAME", "hookimpl", "hookspec", "loopx_register_hosts", "loopx_register_notice_sinks"]

PROJECT_NAME = "loopx"
"""pluggy's project name for LoopX's hooks."""
hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
"""The marker host plugins put on their hook functions."""


@hookspec
def loopx_register_hosts(register: Callable[[Host], None]) -> None:
    """Declare hosts: call `register(MyHost())` once per host the plugin provides."""


@hookspec
def loopx_register_notice_sinks(register: Callable[[NoticeSink], None]) -> None:
    """Declare notice sink kinds: call `register(MySink())` once per kind (its URL schemes) provided."""
