"""Broken: renders the skill with a Jinja environment of its own, whose default `Undefined` turns
the typo `agnet_id` into an empty string instead of an error."""

from __future__ import annotations

import jinja2

from loopx_core.hosts import RenderContext
from tests.broken_plugins.toy import TEMPLATES, Plugin, Toy


class UndefinedVariable(Toy):
    """A lenient environment and a typo."""

    def skill(self, context: RenderContext) -> str:
        """The skill, rendered leniently."""
        env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), keep_trailing_newline=True)
        return env.get_template("broken/skill_typo.md.j2").render(**context.variables())


plugin = Plugin(UndefinedVariable())
