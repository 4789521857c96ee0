"""Broken: the owned skill (Markdown, which has comments) does not say LoopX generated it."""

from __future__ import annotations

from loopx_core.hosts import RenderContext
from tests.broken_plugins.toy import Plugin, Toy


class MissingMarker(Toy):
    """The skill template lacks the provenance comment."""

    def skill(self, context: RenderContext) -> str:
        """The unmarked skill."""
        return self.template("broken/skill_unmarked.md.j2", context)


plugin = Plugin(MissingMarker())
