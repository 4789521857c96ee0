"""Toy: a small host plugin that passes every conformance check; the broken plugins subclass it.

It owns a skill and merges into three shared files (JSON, TOML, a Markdown block), in the
project or, with `--scope user`, in the home folder. Subclasses override the plain methods
(`files`, `hints`, `verify`, ...), never the hook methods, which carry the `@hookimpl` marks.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from loopx_core.hosts.hookspecs import hookimpl
from loopx_core.hosts.jinja import render
from loopx_core.hosts.model import FacadeFile, Finding, HostSurface, RenderContext

TEMPLATES = Path(__file__).resolve().parent / "templates"
SURFACE = HostSurface(name="toy", title="Toy Host", template_root=TEMPLATES, home_env="TOY_HOME")


class Toy:
    """A correct host plugin."""

    surface = SURFACE

    def files(self, context: RenderContext) -> list[FacadeFile]:
        """The facade: an owned skill, a JSON and a TOML config merged by key, a Markdown block."""
        base = "target" if context.scope == "project" else "home"
        return [
            FacadeFile(".toy/skills/loopx/SKILL.md", self.skill(context), base=base),
            FacadeFile(
                ".toy/config.json",
                render(self.surface, "config.json.j2", context),
                base=base,
                merge="json",
                owned_keys=(("servers", "loopx"),),
            ),
            FacadeFile(
                ".toy/settings.toml",
                self.settings(context),
                base=base,
                merge="toml",
                owned_keys=(("tools", "loopx"),),
            ),
            FacadeFile("TOY.md", render(self.surface, "TOY.md.j2", context), base=base, merge="markdown"),
        ]

    def skill(self, context: RenderContext) -> str:
        """The skill's text."""
        return render(self.surface, "SKILL.md.j2", context)

    def settings(self, context: RenderContext) -> str:
        """The TOML fragment."""
        return render(self.surface, "settings.toml.j2", context)

    def hints(self, packet: dict[str, Any]) -> dict[str, Any] | None:
        """How Toy asks again: a should-run command for the packet's goal and agent."""
        ids = ["--goal-id", packet["goal_id"], "--agent-id", packet["agent_id"]]
        return {"next_hint": {"cli_args": ["quota", "should-run", *ids, "--surface", "toy"]}}

    def verify(self, context: RenderContext, installed: dict[str, str]) -> list[Finding]:
        """Every file is there."""
        return [
            Finding(f"{f.base}/{f.path}", "missing")
            for f in self.files(context)
            if f"{f.base}/{f.path}" not in installed
        ]

    def owns(self, host: str) -> bool:
        """True for the host this plugin declares."""
        return host == self.surface.name

    @hookimpl
    def loopx_register_hosts(self, register: Callable[[HostSurface], None]) -> None:
        """Declare the toy surface."""
        register(self.surface)

    @hookimpl
    def loopx_render_facade(self, host: str, context: RenderContext) -> list[FacadeFile] | None:
        """Toy's facade files."""
        return self.files(context) if self.owns(host) else None

    @hookimpl
    def loopx_packet_hints(self, host: str, packet: dict[str, Any]) -> dict[str, Any] | None:
        """Toy's packet hints."""
        return self.hints(packet) if self.owns(host) else None

    @hookimpl
    def loopx_verify_installation(
        self, host: str, context: RenderContext, files: dict[str, str]
    ) -> list[Finding] | None:
        """Toy's reading of an installation."""
        return self.verify(context, files) if self.owns(host) else None


plugin = Toy()
