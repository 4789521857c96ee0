"""Broken: the TOML fragment writes a `[toy]` table its owned keys do not name, so an uninstall
after the user edited the file cannot take it back out."""

from __future__ import annotations

from loopx_core.hosts import RenderContext
from tests.broken_plugins.toy import Plugin, Toy


class UncoveredKeys(Toy):
    """owned_keys covers `tools.loopx` only."""

    def settings(self, context: RenderContext) -> str:
        """The fragment, with an extra table."""
        return super().settings(context) + "\n[toy]\nfacade_version = 1\n"


plugin = Plugin(UncoveredKeys())
