"""Checks beyond a field's type, declared once: the schema's validators and the records' both call them."""

from __future__ import annotations

import math
from typing import Any

IDENTITY_KEYS = frozenset({"goal_id", "agent_id", "todo_id", "turn_instance_id", "replan_obligation_id"})


def finite_json(value: Any) -> Any:
    """`value` (free-form JSON), refused if it holds NaN or an infinity anywhere.

    They are not JSON (RFC 8259): LoopX never writes one (a rewrite would store `null`,
    silently changing the file) and never prints one.
    """
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            raise ValueError("NaN and infinities are not JSON")
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return value


def whole_identity(identity: dict[str, str | None]) -> dict[str, str | None]:
    """Exactly the settlement identity's keys, binding one todo or one replan obligation."""
    if set(identity) != IDENTITY_KEYS:
        raise ValueError(f"identity must have exactly the keys {', '.join(sorted(IDENTITY_KEYS))}")
    if not identity["goal_id"] or not identity["agent_id"] or not identity["turn_instance_id"]:
        raise ValueError("identity needs goal_id, agent_id and turn_instance_id")
    if (identity["todo_id"] is None) == (identity["replan_obligation_id"] is None):
        raise ValueError("identity binds exactly one of todo_id or replan_obligation_id")
    return identity
