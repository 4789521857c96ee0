"""`Record`, the host toolkit's frozen value class (defined in `loopx_core.models.record`).

It lives with the models so that the decision and the store, which sit below the hosts, build
their values with it too; host plugins keep importing it from here.
"""

from __future__ import annotations

from loopx_core.models.record import Record

__all__ = ["Record"]
