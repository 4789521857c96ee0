"""Broken: the host name is snake_case (`toy_host`), not the kebab-case id `--surface` expects."""

from __future__ import annotations

from tests.broken_plugins.toy import Plugin, Toy


class BadSurface(Toy):
    """Declares `toy_host`."""

    name = "toy_host"


plugin = Plugin(BadSurface())
