"""Broken: the skill records when it was rendered (the wall clock), so every install rewrites it."""

from __future__ import annotations

from datetime import UTC, datetime

from loopx_core.hosts import RenderContext
from tests.broken_plugins.toy import Plugin, Toy


class Timestamp(Toy):
    """A render-time stamp in the content."""

    def skill(self, context: RenderContext) -> str:
        """The skill, stamped."""
        return super().skill(context) + f"\n<!-- Rendered {datetime.now(UTC).isoformat()} -->\n"


plugin = Plugin(Timestamp())
