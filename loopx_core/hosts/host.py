"""`Host`: one host LoopX installs into, as an object. Subclass it and register an instance.

The class attributes describe the host (name, title, template folder, base folders, the scope x
layout cases it supports, the `loopx hook` events it answers); the methods are its behaviour.
Only `render` must be written: every other method has a default that fits a host with nothing
special to say. LoopX calls a host's methods only for that host (it dispatches by `name`).

Importing this module loads neither importlib.resources nor the read-back checks: a host's
module is imported on the hook path (`loopx hook NAME`), which must start fast.
"""

from __future__ import annotations

from loopx_core.hosts.model import (
    Base,
    FacadeFile,
    Finding,
    HookAnswer,
    HookCall,
    HostListing,
    HostSteps,
    RenderContext,
)

from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from importlib.resources.abc import Traversable
    from pathlib import Path
    from typing import Any

    from loopx_core.hosts.model import Scope


class PackageFolder:
    """A `Host.templates` folder inside a Python package, found on first use.

    `templates = PackageFolder("my_package", "templates")` is `resources.files("my_package") /
    "templates"` without importing importlib.resources when the module loads.
    """

    def __init__(self, package: str, *parts: str) -> None:
        self.package = package
        self.parts = parts
        self._folder: Traversable | None = None

    def __get__(self, instance: object, owner: type | None = None) -> Traversable:
        """The folder (a `Traversable`), from the class or an instance alike."""
        if self._folder is None:
            from importlib import resources

            folder = resources.files(self.package)
            for part in self.parts:
                folder = folder / part
            self._folder = folder
        return self._folder


def _unique(values: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(values))


class Host:
    """A host LoopX can install into (`loopx workflow-skills --surface NAME`)."""

    name: str = ""
    """Kebab-case id used on the command line: `--surface NAME`."""
    title: str = ""
    """The host's display name, e.g. `Codex App`."""
    templates: Path | Traversable | None = None
    """The folder of this host's Jinja templates (`shared/...` names LoopX's shared parts); a
    `PackageFolder` finds it in a package on first use."""
    bases: tuple[Base, ...] = ()
    """The host's own folders (a home and its environment variable), for `FacadeFile.base`."""
    cases: tuple[tuple[Scope, str], ...] = (("project", "default"), ("user", "default"))
    """The (scope, layout) pairs the host supports; LoopX refuses any other pair (exit 2)."""
    events: tuple[str, ...] = ()
    """The `loopx hook EVENT` names this host answers (`handle_hook_event`)."""
    version: str = ""
    """Shown by `loopx hosts list`; empty: the version of the distribution that provides it."""

    @property
    def scopes(self) -> tuple[str, ...]:
        """The scopes of `cases`, in order."""
        return _unique([scope for scope, _ in self.cases])

    @property
    def layouts(self) -> tuple[str, ...]:
        """The layouts of `cases`, in order."""
        return _unique([layout for _, layout in self.cases])

    def render(self, context: RenderContext) -> list[FacadeFile]:
        """The facade files for `context.scope` and `context.layout` (always one of `cases`)."""
        raise NotImplementedError(f"{type(self).__name__} must implement render()")

    def template(self, name: str, context: RenderContext, **extra: Any) -> str:
        """Render the template `name` from `templates` (or `shared/...`) with the context's variables."""
        from loopx_core.hosts import jinja  # jinja2 loads only when something renders

        if self.templates is None:
            raise ValueError(f"{self.name}: no templates folder is declared")
        return jinja.render(self.templates, name, context, **extra)

    def verify(self, context: RenderContext, installed: dict[str, str]) -> list[Finding]:
        """Read an installation back (`installed`: `<base>/<path>` -> text); empty when sound."""
        from loopx_core.hosts import readback

        return readback.verify(self.render(context), installed, self.name)

    def hints(self, packet: dict[str, Any]) -> dict[str, Any] | None:
        """Host hints for a should-run packet asked with `--surface NAME` (see `scheduler_hints`)."""
        return None

    def heartbeat_prompt(self, context: RenderContext) -> str | None:
        """The prompt of the host's heartbeat automation (`loopx heartbeat-prompt`), if it has one."""
        return None

    def handle_hook_event(self, event: str, call: HookCall) -> HookAnswer:
        """Answer `loopx hook EVENT` (one of `events`); the empty answer lets the host carry on."""
        return HookAnswer()

    def steps(self, operation: str, context: RenderContext) -> HostSteps:
        """What follows an `install` or `uninstall` in the host: notes, commands that unregister."""
        if operation == "install":
            return HostSteps(notes=(f"Restart {self.title} to load LoopX.",))
        return HostSteps(notes=(f"Restart {self.title} so it stops loading LoopX.",))

    def listing(self, scope: str, layout: str) -> HostListing | None:
        """How `loopx doctor` asks the host's CLI whether it still loads LoopX (None: it cannot)."""
        return None
