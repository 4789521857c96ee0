"""Broken: creates a cache folder itself while rendering; the installer never knew, so uninstall
leaves it behind."""

from __future__ import annotations

from pathlib import Path

from loopx_core.hosts import FacadeFile, RenderContext
from tests.broken_plugins.toy import Plugin, Toy


class LeftoverFolder(Toy):
    """A side effect in `render`."""

    def render(self, context: RenderContext) -> list[FacadeFile]:
        """Toy's files, after making `.toy-cache/` in the project."""
        (Path(context.project_dir) / ".toy-cache").mkdir(exist_ok=True)
        return super().render(context)


plugin = Plugin(LeftoverFolder())
