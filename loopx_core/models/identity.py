"""`SettlementIdentity`: who settles what, with a stable effect id and turn key."""

from __future__ import annotations

import hashlib
import json
import re
from typing import NamedTuple

from loopx_core.errors import UsageError

TURN_KEY_PREFIX = "sha256:"
_TURN_KEY = re.compile(r"sha256:[0-9a-f]{64}")


def sha256_hex(text: str) -> str:
    """The sha256 of `text` (UTF-8), as 64 lower-case hex digits."""
    return hashlib.sha256(text.encode()).hexdigest()


def check_turn_key(turn_key: str) -> str:
    """Return the 64-hex digest of a `sha256:<64 hex>` turn key, or raise `UsageError`."""
    if not isinstance(turn_key, str) or not _TURN_KEY.fullmatch(turn_key):
        raise UsageError("invalid --turn-key: expected sha256: followed by 64 lower-case hex digits")
    return turn_key[len(TURN_KEY_PREFIX) :]


class _Identity(NamedTuple):
    goal_id: str
    agent_id: str
    todo_id: str | None
    turn_instance_id: str
    replan_obligation_id: str | None = None


class SettlementIdentity(_Identity):
    """The identity a turn's writeback, spend and closeout are bound to.

    A turn advances either one todo or one replan obligation, never both.
    """

    __slots__ = ()

    def __new__(
        cls,
        goal_id: str,
        agent_id: str,
        todo_id: str | None,
        turn_instance_id: str,
        replan_obligation_id: str | None = None,
    ) -> SettlementIdentity:
        """The identity of these fields; `UsageError` unless exactly one subject is bound."""
        if (todo_id is None) == (replan_obligation_id is None):
            raise UsageError("a settlement identity binds exactly one of todo_id or replan_obligation_id")
        return super().__new__(cls, goal_id, agent_id, todo_id, turn_instance_id, replan_obligation_id)

    @property
    def effect_id(self) -> str:
        """The sha256 of the canonical identity: stable across processes and retries."""
        return sha256_hex(json.dumps(self.to_json(), sort_keys=True, separators=(",", ":")))

    @property
    def turn_key(self) -> str:
        """The journal selector `sha256:<64 hex>` for this turn."""
        return TURN_KEY_PREFIX + self.effect_id

    def to_json(self) -> dict[str, str | None]:
        """The identity as a JSON object."""
        return self._asdict()


def turn_instance_id(goal_id: str, agent_id: str, subject: str, state_version: int) -> str:
    """A deterministic turn instance for a subject (todo or replan obligation) at a state version.

    should-run is read-only, so it names the turn it proposes; `turn begin` opens exactly it,
    and a retried begin finds the same turn instead of opening a second one.
    """
    seed = f"{goal_id}\0{agent_id}\0{subject}\0{state_version}"
    return "ti-" + sha256_hex(seed)[:16]


def replan_obligation_id(goal_id: str, state_version: int) -> str:
    """The replan obligation raised when the frontier is empty at a state version."""
    return f"replan-{goal_id}-v{state_version}"
