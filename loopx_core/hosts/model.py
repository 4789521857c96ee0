"""What hosts and the installer exchange: base folders, render contexts, facade files, answers.

Each is an immutable value (a `NamedTuple`).
"""

from __future__ import annotations

import re
from typing import Literal, NamedTuple

Scope = Literal["project", "user"]
MergeKind = Literal["owned", "json", "toml", "markdown"]
BASE_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
"""What a base name looks like (it is stored in the install manifest)."""
CORE_BASES = ("target", "home")
"""The bases every host may use: the target (the project) and the home folder."""


def is_base_name(name: str) -> bool:
    """True when `name` can name a base (`BASE_NAME`)."""
    return bool(BASE_NAME.match(name))


class Base(NamedTuple):
    """A folder a host's files live under, named by `FacadeFile.base` (declared in `Host.bases`).

    User scope: the first variable of `env` that is set, else `default` under the home folder.
    Project scope: `project` under the target (the installer then records the file against the
    target, so a project's manifest names no host folder).
    """

    name: str
    """The name facade files use, e.g. `codex_home`: snake_case, not `target` or `home`."""
    env: tuple[str, ...] = ()
    """Environment variables that move it (first set wins), e.g. `("CODEX_HOME",)`."""
    default: str = ""
    """Relative to the home folder when no variable is set, e.g. `.codex` ("" is the home itself)."""
    project: str = ""
    """Relative to the target at project scope, e.g. `.codex` ("" is the target itself)."""

    @property
    def shown(self) -> str:
        """How messages name the folder: `$CODEX_HOME`, else `~/.codex`."""
        if self.env:
            return f"${self.env[0]}"
        return f"~/{self.default}" if self.default else "~"


class RenderContext(NamedTuple):
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


class FacadeFile(NamedTuple):
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
    """`target`, `home` or one of the host's declared `bases`."""
    merge: MergeKind = "owned"
    owned_keys: tuple[tuple[str, ...], ...] = ()
    executable: bool = False
    shared: bool = False
    """An owned file other hosts may also own with identical content (uninstall keeps it for them)."""
    host_keys: tuple[str, ...] = ()
    """Top-level keys of an owned `.toml` or `.json` file that the host itself edits (a Codex
    automation's `rrule`, `status`, `updated_at`): their values belong to the host, so a change
    there is neither drift nor a conflict, and re-install keeps the host's values."""

    @property
    def key(self) -> str:
        """`<base>/<path>`: how `Host.verify` finds the file among the installed ones."""
        return f"{self.base}/{self.path}"


class Finding(NamedTuple):
    """A problem found when reading an installation back."""

    path: str
    problem: str


class HostSteps(NamedTuple):
    """What follows an install or uninstall in the host itself (`Host.steps`)."""

    notes: tuple[str, ...] = ()
    """One line each, printed as `Note: ...` (restart the host, approve a server, link a package)."""
    unregister: tuple[tuple[str, ...], ...] = ()
    """Uninstall only: host CLI commands (argv) that take LoopX out of the host's own registry.
    LoopX runs each whose program is on PATH, and prints the others for the user to run."""


class HostListing(NamedTuple):
    """How a host's own CLI shows that LoopX is registered in it (`Host.listing`)."""

    argv: tuple[str, ...]
    """The host CLI command that lists what the host loads (run in the project folder)."""
    expect: str
    """Text its output holds when LoopX is registered."""
    hint: str
    """The command that registers LoopX again, for the finding's hint."""
    timeout_s: float = 30.0
    """How long the command may take (some start the servers they list)."""


class HookCall(NamedTuple):
    """One `loopx hook NAME` invocation: the host's event payload (stdin JSON) and the selectors."""

    payload: dict[str, object]
    goal_id: str | None
    agent_id: str | None
    root: str | None
    """The project root, if known (`--root`, `LOOPX_ROOT`); else the handler derives it."""
    loopx_command: str = "loopx"
    """How the agent runs LoopX (shell words): `loopx` when it is on PATH, else this hook's own
    executable, so instructions a hook hands the agent name a command that runs."""


class HookAnswer(NamedTuple):
    """What the hook prints on stdout and its exit code (hosts read both)."""

    stdout: str = ""
    exit_code: int = 0
    stderr: str = ""
    """One line for the user (a warning the hook recovered from); hosts show it, never parse it."""
