"""Broken: writes a file next to the project (`../`), outside the target."""

from __future__ import annotations

from loopx_core.hosts.model import FacadeFile, RenderContext
from tests.broken_plugins.toy import Toy


class PathEscape(Toy):
    """One file's path climbs out of its base folder."""

    def files(self, context: RenderContext) -> list[FacadeFile]:
        """Toy's files plus one outside."""
        base = "target" if context.scope == "project" else "home"
        return [*super().files(context), FacadeFile("../toy-notes.md", self.skill(context), base=base)]


plugin = PathEscape()
