"""What host plugins and the installer exchange: surfaces, render contexts, facade files."""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Literal

Scope = Literal["project", "user"]
MergeKind = Literal["owned", "json", "toml", "markdown"]

BASES = ("target", "home", "claude_config", "claude_json", "codex_home", "dsh_home", "dsh_agents_home")
"""Folders a facade file can be relative to. Project scope maps all of them to the target."""


@dataclass(frozen=True)
class HostSurface:
    """A host LoopX can install into: declared by a plugin through `loopx_register_hosts`."""

    name: str
    """Kebab-case id used on the command line: `--surface NAME`."""
    title: str
    template_root: Path | Traversable
    """Folder of this host's Jinja templates (the loader is confined to it)."""
    scopes: tuple[Scope, ...] = ("project", "user")
    layouts: tuple[str, ...] = ("default",)
    home_env: str | None = None
    """Environment variable naming the host's user-scope home, e.g. `CODEX_HOME`."""
    restart_notice: str = ""
    """Printed after install/uninstall: what the user must restart or run. `{target}` and the
    other base names (`{codex_home}`, `{dsh_home}`, ...) are replaced by their folders."""
    plugin: str = ""
    """Filled by LoopX: the plugin that registered it."""
    version: str = ""
    """Filled by LoopX: the version of the distribution that provides it."""


@dataclass(frozen=True)
class RenderContext:
    """Everything a template may use; templates see these as variables (StrictUndefined)."""

    host: str
    scope: Scope = "project"
    layout: str = "default"
    loopx_command: str = "loopx"
    """How hosts invoke LoopX (a command name or an absolute path)."""
    goal_id: str | None = None
    agent_id: str | None = None
    loopx_version: str = ""
    created_at_ms: int = 0
    """A stable timestamp for files that record one (automation created_at/updated_at)."""
    project_dir: str = "."
    """The project the loop works in (absolute when installing; `cwds` of an automation)."""

    def variables(self) -> dict[str, object]:
        """The template variables."""
        return {
            "host": self.host,
            "scope": self.scope,
            "layout": self.layout,
            "loopx": self.loopx_command,
            "goal_id": self.goal_id,
            "agent_id": self.agent_id,
            "loopx_version": self.loopx_version,
            "created_at_ms": self.created_at_ms,
            "project_dir": self.project_dir,
        }


@dataclass(frozen=True)
class FacadeFile:
    """One file a host facade puts in place.

    `merge="owned"`: LoopX owns the whole file. Otherwise the file is shared with the user
    (and maybe other hosts): `content` is a fragment and only `owned_keys` (JSON/TOML key
    paths; a final "[]" means "this element of the array") or LoopX's marked block
    (Markdown) are changed.
    """

    path: str
    """Relative POSIX path under `base`."""
    content: str
    base: str = "target"
    merge: MergeKind = "owned"
    owned_keys: tuple[tuple[str, ...], ...] = ()
    executable: bool = False
    shared: bool = False
    """An owned file other hosts may also own with identical content (uninstall keeps it for them)."""
    host_keys: tuple[str, ...] = ()
    """Top-level keys of an owned `.toml` or `.json` file that the host itself edits (a Codex
    automation's `rrule`, `status`, `updated_at`): their values belong to the host, so a change
    there is neither drift nor a conflict, and re-install keeps the host's values."""


@dataclass(frozen=True)
class Finding:
    """A problem found when reading an installation back."""

    path: str
    problem: str


@dataclass(frozen=True)
class HostSteps:
    """What follows an install or uninstall in the host itself (`loopx_host_steps`)."""

    notes: tuple[str, ...] = ()
    """One line each, printed as `Note: ...` (restart the host, approve a server, link a package)."""
    unregister: tuple[tuple[str, ...], ...] = ()
    """Uninstall only: host CLI commands (argv) that take LoopX out of the host's own registry.
    LoopX runs each whose program is on PATH, and prints the others for the user to run."""


@dataclass
class RenderedFacade:
    """A host's rendered files plus notices for the user."""

    host: str
    files: list[FacadeFile] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class HookCall:
    """One `loopx hook NAME` invocation: the host's event payload (stdin JSON) and the selectors."""

    payload: dict[str, object]
    goal_id: str | None
    agent_id: str | None
    root: str | None
    """The project root, if known (`--root`, `LOOPX_ROOT`); else the handler derives it."""


@dataclass(frozen=True)
class HookAnswer:
    """What the hook prints on stdout and its exit code (hosts read both)."""

    stdout: str = ""
    exit_code: int = 0
    stderr: str = ""
    """One line for the user (a warning the hook recovered from); hosts show it, never parse it."""
