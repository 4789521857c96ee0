"""`SettlementIdentity`: who settles what, with a stable effect id and turn key."""

from __future__ import annotations

from loopx_core import jsontext
from loopx_core.errors import UsageError
from loopx_core.frozen_re import compile as _compile

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from typing import Any, NoReturn

try:  # the interpreter's own sha256: hashlib loads OpenSSL (2.5 ms of should-run's start)
    from _sha256 import sha256 as _sha256  # CPython 3.11
except ImportError:  # pragma: no cover - CPython 3.12+ names it _sha2; hashlib elsewhere
    try:
        from _sha2 import sha256 as _sha256
    except ImportError:
        from hashlib import sha256 as _sha256

TURN_KEY_PREFIX = "sha256:"
_TURN_KEY = r"sha256:[0-9a-f]{64}"
"""A turn key; compiled on first use: only a tick with an open turn checks one."""


def sha256_hex(text: str) -> str:
    """The sha256 of `text` (UTF-8), as 64 lower-case hex digits (what `hashlib.sha256` gives)."""
    return _sha256(text.encode()).hexdigest()


def check_turn_key(turn_key: str) -> str:
    """Return the 64-hex digest of a `sha256:<64 hex>` turn key, or raise `UsageError`."""
    if not _compile(_TURN_KEY).fullmatch(turn_key):
        raise UsageError("invalid --turn-key: expected sha256: followed by 64 lower-case hex digits")
    return turn_key[len(TURN_KEY_PREFIX) :]


_FIELDS = ("goal_id", "agent_id", "todo_id", "turn_instance_id", "replan_obligation_id")
"""The identity's fields, in the order its JSON lists them."""


class SettlementIdentity:
    """The identity a turn's writeback, spend and closeout are bound to.

    A turn advances either one todo or one replan obligation, never both. Immutable, equal
    and hashable by its fields (a plain class: a dataclass costs should-run its import).
    """

    __slots__ = _FIELDS
    goal_id: str
    agent_id: str
    todo_id: str | None
    turn_instance_id: str
    replan_obligation_id: str | None

    def __init__(
        self,
        goal_id: str,
        agent_id: str,
        todo_id: str | None,
        turn_instance_id: str,
        replan_obligation_id: str | None = None,
    ) -> None:
        if (todo_id is None) == (replan_obligation_id is None):
            raise UsageError("a settlement identity binds exactly one of todo_id or replan_obligation_id")
        values = (goal_id, agent_id, todo_id, turn_instance_id, replan_obligation_id)
        for name, value in zip(_FIELDS, values, strict=True):
            object.__setattr__(self, name, value)

    def _values(self) -> tuple[str | None, ...]:
        return tuple(getattr(self, name) for name in _FIELDS)

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        raise AttributeError(f"cannot assign to field {name!r}: a settlement identity is immutable")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"cannot delete field {name!r}: a settlement identity is immutable")

    def __eq__(self, other: object) -> bool:
        if type(other) is not SettlementIdentity:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in _FIELDS)
        return f"SettlementIdentity({shown})"

    def __reduce__(self) -> tuple[type[SettlementIdentity], tuple[str | None, ...]]:
        return SettlementIdentity, self._values()

    @property
    def effect_id(self) -> str:
        """The sha256 of the canonical identity: stable across processes and retries."""
        canonical = jsontext.dumps(self.to_json(), sort_keys=True, separators=(",", ":"))
        return sha256_hex(canonical)

    @property
    def turn_key(self) -> str:
        """The journal selector `sha256:<64 hex>` for this turn."""
        return TURN_KEY_PREFIX + self.effect_id

    def to_json(self) -> dict[str, str | None]:
        """The identity as a JSON object."""
        return dict(zip(_FIELDS, self._values(), strict=True))


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
