"""Broken: `verify` looks files up by path alone, but LoopX keys them `<base>/<path>`, so a sound
installation reads as missing and `--check` always reports drift."""

from __future__ import annotations

from loopx_core.hosts import Finding, RenderContext
from tests.broken_plugins.toy import Plugin, Toy


class WrongVerify(Toy):
    """Reads `installed[f.path]`."""

    def verify(self, context: RenderContext, installed: dict[str, str]) -> list[Finding]:
        """Every file looked up under the wrong key."""
        return [Finding(f.path, "missing") for f in self.render(context) if f.path not in installed]


plugin = Plugin(WrongVerify())
