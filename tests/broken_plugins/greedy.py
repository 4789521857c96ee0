"""Broken: the hooks forget to check `host`, so Toy answers for every host (and, being a
first-result hook, its facade would replace another host's)."""

from __future__ import annotations

from tests.broken_plugins.toy import Toy


class Greedy(Toy):
    """Owns every host."""

    def owns(self, host: str) -> bool:
        """Always."""
        return True


plugin = Greedy()
