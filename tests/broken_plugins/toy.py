"""Toy: a small host plugin that passes every conformance check; the broken plugins subclass it.

It declares a home of its own (`$TOY_HOME`, default `~/.toy`; `.toy/` in a project), owns a
skill there and merges into three shared files (JSON, TOML, a Markdown block). Subclasses
override one method of the host each and export `plugin = Plugin(TheirHost())`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from loopx_core.hosts import Base, FacadeFile, Host, RenderContext, hookimpl

TEMPLATES = Path(__file__).resolve().parent / "templates"


class Toy(Host):
    """A correct host."""

    name = "toy"
    title = "Toy Host"
    templates = TEMPLATES
    bases = (Base("toy_home", env=("TOY_HOME",), default=".toy", project=".toy"),)

    def render(self, context: RenderContext) -> list[FacadeFile]:
        """The facade: an owned skill, a JSON and a TOML config merged by key, a Markdown block."""
        return [
            FacadeFile("skills/loopx/SKILL.md", self.skill(context), "toy_home"),
            FacadeFile(
                "config.json",
                self.template("config.json.j2", context),
                "toy_home",
                merge="json",
                owned_keys=(("servers", "loopx"),),
            ),
            FacadeFile(
                "settings.toml",
                self.settings(context),
                "toy_home",
                merge="toml",
                owned_keys=(("tools", "loopx"),),
            ),
            FacadeFile("TOY.md", self.template("TOY.md.j2", context), "home", merge="markdown"),
        ]

    def skill(self, context: RenderContext) -> str:
        """The skill's text."""
        return self.template("SKILL.md.j2", context)

    def settings(self, context: RenderContext) -> str:
        """The TOML fragment."""
        return self.template("settings.toml.j2", context)

    def hints(self, packet: dict[str, Any]) -> dict[str, Any] | None:
        """How Toy asks again: a should-run command for the packet's goal and agent."""
        ids = ["--goal-id", packet["goal_id"], "--agent-id", packet["agent_id"]]
        return {"next_hint": {"cli_args": ["quota", "should-run", *ids, "--surface", "toy"]}}


class Plugin:
    """A plugin object that registers one host."""

    def __init__(self, host: Host) -> None:
        self.host = host

    @hookimpl
    def loopx_register_hosts(self, register: Callable[[Host], None]) -> None:
        """Register the host."""
        register(self.host)


plugin = Plugin(Toy())
