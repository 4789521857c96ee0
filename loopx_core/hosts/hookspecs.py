"""LoopX hook specifications (pluggy project name `loopx`).

Host plugins implement these with `@loopx_core.hosts.hookspecs.hookimpl` and are found
through the `loopx` entry-point group, built-in hosts included:

    [project.entry-points.loopx]
    my-host = "my_package.plugin"

Every hook here is documented in docs/hooks.md and has a test of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pluggy

from loopx_core.hosts.model import (
    FacadeFile,
    Finding,
    HookAnswer,
    HookCall,
    HostSteps,
    HostSurface,
    RenderContext,
)

PROJECT_NAME = "loopx"
hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def loopx_register_hosts(register: Callable[[HostSurface], None]) -> None:
    """Declare host surfaces: call `register(HostSurface(...))` once per host."""


@hookspec(firstresult=True)
def loopx_render_facade(host: str, context: RenderContext) -> list[FacadeFile] | None:
    """Render `host`'s facade files for `context` (scope, layout); return None for other hosts."""


@hookspec
def loopx_packet_hints(host: str, packet: dict[str, Any]) -> dict[str, Any] | None:
    """Hints for a should-run packet asked with `--surface host` (ack/failure commands, rrule).

    Return None for other hosts. A dict is merged into `packet["scheduler_hint"][host_key]`
    where `host_key` is the host name with `-` replaced by `_`.
    """


@hookspec(firstresult=True)
def loopx_verify_installation(
    host: str, context: RenderContext, files: dict[str, str]
) -> list[Finding] | None:
    """Read `host`'s installed files back (`files`: installed path -> text) and report problems.

    Return an empty list when the installation is sound, None for other hosts.
    """


@hookspec(firstresult=True)
def loopx_heartbeat_prompt(host: str, context: RenderContext) -> str | None:
    """The prompt a host's heartbeat automation runs each tick (`loopx heartbeat-prompt`); None for other hosts."""


@hookspec
def loopx_register_hook_handlers(register: Callable[[str, Callable[[HookCall], HookAnswer]], None]) -> None:
    """Declare handlers for `loopx hook NAME` (a host's event hooks, e.g. a Stop hook): `register(NAME, handler)`."""


@hookspec(firstresult=True)
def loopx_host_steps(host: str, operation: str, context: RenderContext) -> HostSteps | None:
    """What the user (or LoopX) does in the host after `operation` ("install" or "uninstall").

    Notes differ per operation, scope and layout; `unregister` lists the host CLI commands that
    undo a registration at uninstall. Return None for other hosts (the installer then falls back
    to the surface's `restart_notice` after an install).
    """
