"""Claude Code: the /loopx skill, a status command, the loopx MCP server and the session hooks.

Project scope writes `.claude/` and `.mcp.json`; user scope `$CLAUDE_CONFIG_DIR` (default
`~/.claude`) and `.claude.json`. The `plugin` layout (project scope) is a plugin bundle with
its marketplace, which `claude plugin validate --strict` accepts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loopx_core.hosts import (
    Base,
    FacadeFile,
    HookAnswer,
    HookCall,
    Host,
    HostListing,
    HostSteps,
    PackageFolder,
    RenderContext,
    hookimpl,
)

if TYPE_CHECKING:
    from collections.abc import Callable

MCP_KEYS = (("mcpServers", "loopx"),)
HOOK_KEYS = (("hooks", "SessionStart", "[]"), ("hooks", "Stop", "[]"))
"""One element of each event's array in settings.json is LoopX's."""
PLUGIN = "loopx@loopx"
"""The bundle as Claude names it: plugin `loopx` of the marketplace `loopx` (under plugins/loopx)."""


class ClaudeCode(Host):
    """The claude-code host."""

    name = "claude-code"
    title = "Claude Code"
    templates = PackageFolder("loopx_templates", "claude-code")
    bases = (
        Base("claude_config", env=("CLAUDE_CONFIG_DIR",), default=".claude", project=".claude"),
        Base("claude_json", env=("CLAUDE_CONFIG_DIR",)),
    )
    cases = (("project", "default"), ("project", "plugin"), ("user", "default"))
    events = ("claude-session-start", "claude-stop")

    def render(self, context: RenderContext) -> list[FacadeFile]:
        """The skill, the status command, the MCP server and the hooks (or the plugin bundle)."""
        if context.layout == "plugin":
            return self._bundle(context)
        mcp, base = (".mcp.json", "target") if context.scope == "project" else (".claude.json", "claude_json")
        return [
            FacadeFile("skills/loopx/SKILL.md", self.template("SKILL.md.j2", context), "claude_config"),
            FacadeFile(
                "commands/loopx-status.md", self.template("loopx-status.md.j2", context), "claude_config"
            ),
            FacadeFile(mcp, self.template(f"{mcp}.j2", context), base, "json", MCP_KEYS),
            FacadeFile(
                "settings.json", self.template("hooks.json.j2", context), "claude_config", "json", HOOK_KEYS
            ),
        ]

    def _bundle(self, context: RenderContext) -> list[FacadeFile]:
        # The marketplace entry and plugin.json must carry the same version (the validator warns otherwise).
        version = context.loopx_version or "0.0.0"
        files = {
            ".claude-plugin/marketplace.json": "marketplace.json.j2",
            "plugins/loopx/.claude-plugin/plugin.json": "plugin.json.j2",
            "plugins/loopx/skills/loopx/SKILL.md": "SKILL.md.j2",
            "plugins/loopx/commands/loopx-status.md": "loopx-status.md.j2",
            "plugins/loopx/hooks/hooks.json": "hooks.json.j2",
            "plugins/loopx/.mcp.json": ".mcp.json.j2",
        }
        return [
            FacadeFile(path, self.template(name, context, version=version)) for path, name in files.items()
        ]

    def handle_hook_event(self, event: str, call: HookCall) -> HookAnswer:
        """`loopx hook claude-stop` and `loopx hook claude-session-start`."""
        from loopx_claude_code import events  # the store loads only when a hook runs

        return events.stop(call) if event == "claude-stop" else events.session_start(call)

    def steps(self, operation: str, context: RenderContext) -> HostSteps:
        """Restart notes per scope; the plugin layout is added (and removed) with Claude's own CLI."""
        if context.layout == "plugin" and operation == "install":
            return HostSteps(
                notes=(
                    f"From this folder run `claude plugin marketplace add ./` and `claude plugin install {PLUGIN}` "
                    f"(in Claude Code: `/plugin marketplace add ./`, `/plugin install {PLUGIN}`), then restart Claude Code.",
                )
            )
        if context.layout == "plugin":
            return HostSteps(
                notes=("Restart Claude Code: the LoopX plugin and its marketplace are gone.",),
                unregister=(
                    ("claude", "plugin", "uninstall", PLUGIN),
                    ("claude", "plugin", "marketplace", "remove", "loopx"),
                ),
            )
        if operation == "install":
            approve = (
                ", and approve the project MCP server `loopx` when asked"
                if context.scope == "project"
                else ""
            )
            return HostSteps(
                notes=(
                    f"Restart Claude Code (or review /hooks) to load the LoopX skill, command and hooks{approve}.",
                )
            )
        gone = f"Restart Claude Code: the LoopX skill, command, hooks and {context.scope} MCP server `loopx` are gone."
        return HostSteps(notes=(gone,))

    def listing(self, scope: str, layout: str) -> HostListing | None:
        """`claude plugin list` names the plugin; `claude mcp list` the MCP server `loopx`."""
        if layout == "plugin":
            return HostListing(("claude", "plugin", "list"), PLUGIN, f"claude plugin install {PLUGIN}")
        return HostListing(
            ("claude", "mcp", "list"),
            "loopx:",
            f"loopx workflow-skills --install --surface claude-code --scope {scope}",
        )


@hookimpl
def loopx_register_hosts(register: Callable[[Host], None]) -> None:
    """Register Claude Code."""
    register(ClaudeCode())
