"""Broken: writes a file next to its home folder (`../`), outside the base."""

from __future__ import annotations

from loopx_core.hosts import FacadeFile, RenderContext
from tests.broken_plugins.toy import Plugin, Toy


class PathEscape(Toy):
    """One file's path climbs out of its base folder."""

    def render(self, context: RenderContext) -> list[FacadeFile]:
        """Toy's files plus one outside."""
        return [*super().render(context), FacadeFile("../toy-notes.md", self.skill(context), "toy_home")]


plugin = Plugin(PathEscape())
