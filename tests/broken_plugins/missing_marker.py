"""Broken: the owned skill (Markdown, which has comments) does not say LoopX generated it."""

from __future__ import annotations

from loopx_core.hosts.jinja import render
from loopx_core.hosts.model import RenderContext
from tests.broken_plugins.toy import Toy


class MissingMarker(Toy):
    """The skill template lacks the provenance comment."""

    def skill(self, context: RenderContext) -> str:
        """The unmarked skill."""
        return render(self.surface, "broken/skill_unmarked.md.j2", context)


plugin = MissingMarker()
