"""The settlement algebra: plan, steps, receipts, typed failures and `SettlementResult.bind`.

The plan and its steps live in `loopx_core.kernel.plan` (what a tick needs) and are
re-exported here; the receipts, failures and results are the settlement's own.

A turn settles as `validation -> durable_writeback -> quota_spend -> terminal_closeout?`.
Each step is a Kleisli arrow `SettlementResult -> SettlementResult`: it either finds its
durable receipt (replay: no effect), refuses with a typed failure, or performs its effect
and returns its receipt. `bind` skips every step after a failure and keeps the failure's
kind. The adapters (CLI commands, the in-process turn driver, the task lease) share this
algebra, not an executor.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import TYPE_CHECKING, Any, NamedTuple

from loopx_core.errors import SettlementError
from loopx_core.kernel.plan import SettlementPlan, SettlementStep, StepKind, build_plan

if TYPE_CHECKING:
    from loopx_core.models.identity import SettlementIdentity

Step = Callable[["SettlementResult"], "SettlementResult"]
"""A settlement step: a Kleisli arrow on `SettlementResult`."""

__all__ = [
    "FailureKind",
    "SettlementFailure",
    "SettlementPlan",
    "SettlementReceipt",
    "SettlementResult",
    "SettlementStep",
    "Step",
    "StepKind",
    "build_plan",
    "compose",
    "noop",
]


class FailureKind(StrEnum):
    """Why a settlement step refused; each kind has its own CLI exit code."""

    INVALID_IDENTITY = "invalid_identity"
    RECEIPT_MISSING = "receipt_missing"
    IDENTITY_MISMATCH = "identity_mismatch"
    WRITEBACK_MISSING = "writeback_missing"
    WRITEBACK_REJECTED = "writeback_rejected"
    BUDGET_REJECTED = "budget_rejected"
    PERMISSION_DENIED = "permission_denied"
    CANCELLED = "cancelled"
    CLOSEOUT_REJECTED = "closeout_rejected"
    LEASE_LOST = "lease_lost"


FAILURE_KINDS = tuple(FailureKind)
"""Every failure kind."""


class SettlementReceipt(NamedTuple):
    """Proof that a step committed; `replayed` when it was found, not performed, this time."""

    step: str
    idempotency_key: str
    effect_id: str
    detail: dict[str, Any]
    replayed: bool = False

    def to_json(self) -> dict[str, Any]:
        """The receipt as JSON data."""
        return {
            "step": self.step,
            "idempotency_key": self.idempotency_key,
            "effect_id": self.effect_id,
            "detail": self.detail,
            "replayed": self.replayed,
        }


class SettlementFailure(NamedTuple):
    """A typed refusal: its kind survives every later step."""

    kind: FailureKind
    step: str
    message: str

    def to_json(self) -> dict[str, str]:
        """The failure as JSON data."""
        return {"kind": str(self.kind), "step": self.step, "message": self.message}

    def raise_error(self) -> None:
        """Raise it as the CLI's `SettlementError` (one line, its own exit code)."""

        raise SettlementError(str(self.kind), self.message, step=self.step)


class SettlementResult(NamedTuple):
    """The accumulated outcome: receipts in order, externally visible effects, a failure or none."""

    identity: SettlementIdentity
    receipts: tuple[SettlementReceipt, ...] = ()
    effects: tuple[str, ...] = ()
    failure: SettlementFailure | None = None

    @property
    def ok(self) -> bool:
        """No step has failed."""
        return self.failure is None

    def bind(self, step: Step) -> SettlementResult:
        """Run `step` unless a failure already stopped the chain (ordered short-circuit)."""
        if self.failure is not None:
            return self
        return step(self)

    def add(self, receipt: SettlementReceipt, effect: str | None = None) -> SettlementResult:
        """This result with one more receipt (and the visible effect it had, if any)."""
        effects = self.effects if effect is None or receipt.replayed else (*self.effects, effect)
        return self._replace(receipts=(*self.receipts, receipt), effects=effects)

    def fail(self, kind: FailureKind | str, step: str, message: str) -> SettlementResult:
        """This result stopped by a typed failure."""
        return self._replace(failure=SettlementFailure(FailureKind(kind), step, message))

    def receipt(self, step: str) -> SettlementReceipt | None:
        """The receipt of `step`, if committed."""
        return next((r for r in self.receipts if r.step == step), None)

    def to_json(self) -> dict[str, Any]:
        """The result as JSON data."""
        return {
            "identity": self.identity.to_json(),
            "effect_id": self.identity.effect_id,
            "turn_key": self.identity.turn_key,
            "receipts": [r.to_json() for r in self.receipts],
            "effects": list(self.effects),
            "failure": self.failure.to_json() if self.failure else None,
        }


def noop(result: SettlementResult) -> SettlementResult:
    """The identity step: changes no receipt and has no effect."""
    return result


def compose(*steps: Step) -> Step:
    """Kleisli composition: one step that runs `steps` in order, short-circuiting on failure."""

    def composed(result: SettlementResult) -> SettlementResult:
        for step in steps:
            result = result.bind(step)
        return result

    return composed
