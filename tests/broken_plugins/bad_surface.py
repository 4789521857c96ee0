"""Broken: the host name is snake_case (`toy_host`), not the kebab-case id `--surface` expects."""

from __future__ import annotations

import dataclasses

from tests.broken_plugins.toy import SURFACE, Toy


class BadSurface(Toy):
    """Declares `toy_host`."""

    surface = dataclasses.replace(SURFACE, name="toy_host")


plugin = BadSurface()
