"""Codex App: the loopx skill, the `[mcp_servers.loopx]` table and the heartbeat automation.

Project scope writes `.agents/skills/loopx/`, `.codex/config.toml` and a block in `AGENTS.md`;
user scope writes `~/.agents/skills/loopx/`, `$CODEX_HOME/config.toml` and, when a goal and an
agent are given, `$CODEX_HOME/automations/<id>/automation.toml`. The App's private database is
never written: the heartbeat applies rrule changes with the App's own automation tool and acks.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from loopx_core.hosts import (
    Base,
    FacadeFile,
    Host,
    HostListing,
    HostSteps,
    PackageFolder,
    RenderContext,
    hookimpl,
    scheduler_hints,
)

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

MCP_KEYS = (("mcp_servers", "loopx"),)
"""The table LoopX owns in `config.toml` (users' tool approvals below it are kept by the merge)."""
TRUST = '[projects."<dir>"] trust_level = "trusted"'
ID_PART = re.compile(r"[a-z0-9._-]+")
"""What each part of an automation's id (a goal id, an agent id) looks like."""


def automation_id(context: RenderContext) -> str:
    """The heartbeat automation's id, `loopx-<goal>-<agent>`; ValueError without valid ids."""
    if not (context.goal_id and context.agent_id):
        raise ValueError("a codex-app heartbeat needs both a goal id and an agent id")

    for value in (context.goal_id, context.agent_id):
        if not ID_PART.fullmatch(value):
            raise ValueError(f"invalid id {value!r}: use a-z 0-9 . _ -")
    return f"loopx-{context.goal_id}-{context.agent_id}"


class CodexApp(Host):
    """The codex-app host."""

    name = "codex-app"
    title = "Codex App"
    templates = PackageFolder("loopx_templates", "codex-app")
    bases = (Base("codex_home", env=("CODEX_HOME",), default=".codex", project=".codex"),)

    def render(self, context: RenderContext) -> list[FacadeFile]:
        """The skill, the MCP server table, and the AGENTS.md block (project) or the automation (user)."""
        skill = self.template("shared/agents-skill/SKILL.md.j2", context)
        files = [
            FacadeFile(".agents/skills/loopx/SKILL.md", skill, "home", shared=True),
            FacadeFile(
                ".agents/skills/loopx/agents/openai.yaml", self.template("openai.yaml.j2", context), "home"
            ),
            FacadeFile(
                "config.toml", self.template("config.toml.j2", context), "codex_home", "toml", MCP_KEYS
            ),
        ]
        if context.scope == "project":
            return [*files, FacadeFile("AGENTS.md", self.template("AGENTS.md.j2", context), merge="markdown")]
        if context.goal_id and context.agent_id:
            ident = automation_id(context)
            text = self.template(
                "automation.toml.j2", context, automation_id=ident, prompt=self.heartbeat_prompt(context)
            )
            # The App edits rrule, status and updated_at itself (the heartbeat asks it to): those are its keys.
            keys = ("rrule", "status", "updated_at")
            files.append(
                FacadeFile(f"automations/{ident}/automation.toml", text, "codex_home", host_keys=keys)
            )
        return files

    def hints(self, packet: dict[str, Any]) -> dict[str, Any] | None:
        """The CLI args that ack the recommended rrule (or report that the App refused it)."""
        return scheduler_hints(packet)

    def heartbeat_prompt(self, context: RenderContext) -> str:
        """The automation's prompt for the context's goal and agent (`loopx heartbeat-prompt`)."""
        automation_id(context)  # validates the ids
        return self.template("heartbeat-prompt.md.j2", context)

    def steps(self, operation: str, context: RenderContext) -> HostSteps:
        """Restart notes; a project needs the user's trust entry, an automation lives on in the App."""
        if operation == "install" and context.scope == "project":
            note = (
                "Restart Codex to load the LoopX skill and the MCP server in .codex/config.toml. Codex "
                f"reads it only for a trusted project: {TRUST} in $CODEX_HOME/config.toml "
                "(default ~/.codex/config.toml), <dir> being this project's folder. No heartbeat "
                "automation at project scope (the App keeps automations per user): "
                "`loopx workflow-skills --install --surface codex-app --scope user -g GOAL -a AGENT` adds one."
            )
        elif operation == "install":
            heartbeat = context.goal_id and context.agent_id
            extra = (
                f" and the heartbeat automation {automation_id(context)} (its rrule and status are the App's to change)"
                if heartbeat
                else ""
            )
            note = f"Restart Codex to load the LoopX skill, the MCP server in $CODEX_HOME/config.toml{extra}."
            if not heartbeat:
                note += " No heartbeat automation: give --goal-id and --agent-id for one."
        elif context.scope == "project":
            note = (
                "Restart Codex: the LoopX skill and MCP server are gone. The project's trust entry "
                f"({TRUST} in $CODEX_HOME/config.toml) is yours: LoopX leaves it."
            )
        else:
            note = (
                "Restart Codex: the LoopX skill, MCP server and automation files are gone; if the Codex App "
                "still lists a LoopX automation, delete it there (the App keeps its own copy)."
            )
        return HostSteps(notes=(note,))

    def listing(self, scope: str, layout: str) -> HostListing | None:
        """`codex mcp get loopx --json` reads the user's config (a project's only when trusted)."""
        if scope != "user":
            return None
        return HostListing(
            ("codex", "mcp", "get", "loopx", "--json"),
            '"loopx"',
            "loopx workflow-skills --install --surface codex-app --scope user",
        )


@hookimpl
def loopx_register_hosts(register: Callable[[Host], None]) -> None:
    """Register the Codex App."""
    register(CodexApp())
