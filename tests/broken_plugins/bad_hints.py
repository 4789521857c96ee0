"""Broken: `cli_args` is one shell string, not a list of arguments."""

from __future__ import annotations

from typing import Any

from tests.broken_plugins.toy import Plugin, Toy


class BadHints(Toy):
    """A command line where arguments belong."""

    def hints(self, packet: dict[str, Any]) -> dict[str, Any] | None:
        """The next command as a string."""
        return {"next_hint": {"cli_args": f"quota should-run --goal-id {packet['goal_id']}"}}


plugin = Plugin(BadHints())
