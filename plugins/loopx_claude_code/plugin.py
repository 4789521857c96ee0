"""Claude Code host: the /loopx skill, a status command, the loopx MCP server and the session hooks.

Scopes: project (`.claude/`, `.mcp.json`) and user (`$CLAUDE_CONFIG_DIR`, `.claude.json`).
Layouts: `default` (files in place) and `plugin` (a plugin bundle plus a marketplace under the
target, project scope only), which `claude plugin validate --strict` accepts.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib import resources
from typing import Any

from loopx_core.hosts.hookspecs import hookimpl
from loopx_core.hosts.jinja import render
from loopx_core.hosts.model import FacadeFile, Finding, HostSteps, HostSurface, RenderContext
from loopx_core.hosts.readback import front_matter, verify_against

SURFACE = HostSurface(
    name="claude-code",
    title="Claude Code",
    template_root=resources.files("loopx_templates") / "claude-code",
    scopes=("project", "user"),
    layouts=("default", "plugin"),
    home_env="CLAUDE_CONFIG_DIR",
    restart_notice="Restart Claude Code to load LoopX.",
)

MCP_KEYS: tuple[tuple[str, ...], ...] = (("mcpServers", "loopx"),)
"""The key LoopX owns in `.mcp.json` / `.claude.json`."""
HOOK_KEYS: tuple[tuple[str, ...], ...] = (("hooks", "SessionStart", "[]"), ("hooks", "Stop", "[]"))
"""The hook entries LoopX owns in `settings.json` (one element of each event's array)."""
MARKETPLACE = "loopx"
"""The marketplace name in `marketplace.json` (the plugin installs as `loopx@loopx`)."""
PLUGIN_ROOT = "plugins/loopx"
"""Where the plugin layout puts the plugin bundle, relative to the marketplace (the target)."""


def _render(template: str, context: RenderContext, **extra: Any) -> str:
    return render(SURFACE, template, context, **extra)


def _project_files(context: RenderContext) -> list[FacadeFile]:
    return [
        FacadeFile(".claude/skills/loopx/SKILL.md", _render("SKILL.md.j2", context)),
        FacadeFile(".claude/commands/loopx-status.md", _render("loopx-status.md.j2", context)),
        FacadeFile(".mcp.json", _render(".mcp.json.j2", context), merge="json", owned_keys=MCP_KEYS),
        FacadeFile(
            ".claude/settings.json", _render("settings.json.j2", context), merge="json", owned_keys=HOOK_KEYS
        ),
    ]


def _user_files(context: RenderContext) -> list[FacadeFile]:
    config = "claude_config"
    return [
        FacadeFile("skills/loopx/SKILL.md", _render("SKILL.md.j2", context), base=config),
        FacadeFile("commands/loopx-status.md", _render("loopx-status.md.j2", context), base=config),
        FacadeFile(
            "settings.json",
            _render("settings.json.j2", context),
            base=config,
            merge="json",
            owned_keys=HOOK_KEYS,
        ),
        FacadeFile(
            ".claude.json",
            _render(".claude.json.j2", context),
            base="claude_json",
            merge="json",
            owned_keys=MCP_KEYS,
        ),
    ]


def _plugin_files(context: RenderContext) -> list[FacadeFile]:
    # The marketplace entry and plugin.json must carry the same version (the validator warns otherwise).
    version = context.loopx_version or "0.0.0"
    root = PLUGIN_ROOT
    return [
        FacadeFile(
            ".claude-plugin/marketplace.json", _render("marketplace.json.j2", context, version=version)
        ),
        FacadeFile(f"{root}/.claude-plugin/plugin.json", _render("plugin.json.j2", context, version=version)),
        FacadeFile(f"{root}/skills/loopx/SKILL.md", _render("SKILL.md.j2", context)),
        FacadeFile(f"{root}/commands/loopx-status.md", _render("loopx-status.md.j2", context)),
        FacadeFile(f"{root}/hooks/hooks.json", _render("hooks.json.j2", context)),
        FacadeFile(f"{root}/.mcp.json", _render(".mcp.json.j2", context)),
    ]


def render_files(context: RenderContext) -> list[FacadeFile]:
    """The facade files for `context.scope` and `context.layout`; ValueError for an unsupported pair."""
    if context.layout == "default" and context.scope == "project":
        return _project_files(context)
    if context.layout == "default" and context.scope == "user":
        return _user_files(context)
    if context.layout == "plugin" and context.scope == "project":
        return _plugin_files(context)
    raise ValueError(f"claude-code has no {context.scope!r} scope with the {context.layout!r} layout")


def _owned_key_problems(expected: dict[str, Any], actual: Any, key_path: tuple[str, ...]) -> list[str]:
    """Compare one owned key (a trailing "[]": one element of an array) of a JSON document."""
    want: Any = expected
    have: Any = actual
    walked: list[str] = []
    for part in key_path:
        if part == "[]":
            element = want[0] if isinstance(want, list) and want else want
            if not isinstance(have, list) or element not in have:
                return [f"{'.'.join(walked)} lacks the LoopX entry {json.dumps(element)}"]
            return []
        want = want[part]
        if not isinstance(have, dict) or part not in have:
            return [f"no {'.'.join([*walked, part])} entry"]
        have = have[part]
        walked.append(part)
    if have == want:
        return []
    if isinstance(want, dict) and isinstance(have, dict):
        return [
            f"{'.'.join(walked)}.{name} is {json.dumps(have.get(name))}, expected {json.dumps(value)}"
            for name, value in want.items()
            if have.get(name) != value
        ]
    return [f"{'.'.join(walked)} is {json.dumps(have)}, expected {json.dumps(want)}"]


def _check(expected: FacadeFile, text: str) -> list[str]:
    if expected.path.endswith(".md"):
        meta = front_matter(text)
        if meta is None:
            return ["no front matter"]
        wanted = front_matter(expected.content) or {}
        return [
            f"front matter {k} is {meta.get(k)!r}, expected {v!r}"
            for k, v in wanted.items()
            if meta.get(k) != v
        ]
    try:
        actual = json.loads(text)
    except ValueError as exc:
        return [f"invalid JSON: {exc}"]
    fragment = json.loads(expected.content)
    if expected.merge == "owned":
        return [] if actual == fragment else ["differs from the LoopX rendering (edited or stale)"]
    problems: list[str] = []
    for key_path in expected.owned_keys:
        problems += _owned_key_problems(fragment, actual, key_path)
    return problems


def verify_files(context: RenderContext, installed: dict[str, str]) -> list[Finding]:
    """Read an installation back: every file present and parseable, the LoopX keys and hooks in place."""
    return verify_against(render_files(context), installed, _check)


@hookimpl
def loopx_register_hosts(register: Callable[[HostSurface], None]) -> None:
    """Declare the claude-code surface."""
    register(SURFACE)


@hookimpl
def loopx_render_facade(host: str, context: RenderContext) -> list[FacadeFile] | None:
    """Claude Code's facade files for the context's scope and layout."""
    return render_files(context) if host == SURFACE.name else None


@hookimpl
def loopx_packet_hints(host: str, packet: dict[str, Any]) -> dict[str, Any] | None:
    """No hints: the Stop hook reads the packet itself and Claude Code has no scheduler to ack (always None)."""
    return None


@hookimpl
def loopx_verify_installation(
    host: str, context: RenderContext, files: dict[str, str]
) -> list[Finding] | None:
    """Findings for a claude-code installation (empty when sound); None for other hosts."""
    return verify_files(context, files) if host == SURFACE.name else None


@hookimpl
def loopx_register_hook_handlers(register: Callable[[str, Callable[..., Any]], None]) -> None:
    """`loopx hook claude-stop` and `loopx hook claude-session-start`."""
    from loopx_claude_code import events

    register("claude-stop", events.stop)
    register("claude-session-start", events.session_start)


def host_steps(operation: str, context: RenderContext) -> HostSteps:
    """Notes per operation, scope and layout; the plugin layout unregisters its marketplace at uninstall."""
    plugin = f"loopx@{MARKETPLACE}"
    if context.layout == "plugin":
        if operation == "install":
            return HostSteps(
                notes=(
                    f"From this folder run `claude plugin marketplace add ./` and `claude plugin install {plugin}` "
                    f"(in Claude Code: `/plugin marketplace add ./`, `/plugin install {plugin}`), then restart Claude Code.",
                )
            )
        return HostSteps(
            notes=("Restart Claude Code: the LoopX plugin and its marketplace are gone.",),
            unregister=(
                ("claude", "plugin", "uninstall", plugin),
                ("claude", "plugin", "marketplace", "remove", MARKETPLACE),
            ),
        )
    where = "project" if context.scope == "project" else "user"
    if operation == "install":
        approve = ", and approve the project MCP server `loopx` when asked" if where == "project" else ""
        return HostSteps(
            notes=(
                f"Restart Claude Code (or review /hooks) to load the LoopX skill, command and hooks{approve}.",
            )
        )
    return HostSteps(
        notes=(
            f"Restart Claude Code: the LoopX skill, command, hooks and {where} MCP server `loopx` are gone.",
        )
    )


@hookimpl
def loopx_host_steps(host: str, operation: str, context: RenderContext) -> HostSteps | None:
    """What to do in Claude Code after an install or uninstall; None for other hosts."""
    return host_steps(operation, context) if host == SURFACE.name else None
