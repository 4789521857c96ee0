"""The settlement plan: the ordered, identity-bound steps that settle one turn.

`build_plan` is all a should-run tick needs of the settlement kernel (the packet lists the
plan), so it lives apart from the result algebra (`loopx_core.kernel.algebra`, which
re-exports it): a tick does not build the failure kinds and result records.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, NamedTuple

from loopx_core.errors import SettlementError

if TYPE_CHECKING:
    from loopx_core.models.identity import SettlementIdentity


class StepKind(StrEnum):
    """A settlement step kind, in their only legal order."""

    VALIDATION = "validation"
    DURABLE_WRITEBACK = "durable_writeback"
    QUOTA_SPEND = "quota_spend"
    TERMINAL_CLOSEOUT = "terminal_closeout"


STEP_KINDS = tuple(StepKind)
"""Every step kind, in the order settlement runs them."""


class SettlementStep(NamedTuple):
    """One planned step: who performs it, what must hold first, how it is deduplicated."""

    kind: StepKind
    owner: str
    precondition: str
    idempotency_key: str
    expected_receipt: str

    def to_json(self) -> dict[str, str]:
        """The step as JSON data."""
        return {
            "kind": str(self.kind),
            "owner": self.owner,
            "precondition": self.precondition,
            "idempotency_key": self.idempotency_key,
            "expected_receipt": self.expected_receipt,
        }


class SettlementPlan(NamedTuple):
    """The ordered steps that settle one identity."""

    identity: SettlementIdentity
    steps: tuple[SettlementStep, ...]

    @property
    def kinds(self) -> tuple[StepKind, ...]:
        """The step kinds in order."""
        return tuple(s.kind for s in self.steps)


_PRECONDITIONS = {
    StepKind.VALIDATION: "turn open and not cancelled; the identity is the turn's",
    StepKind.DURABLE_WRITEBACK: "validation passed",
    StepKind.QUOTA_SPEND: "durable writeback receipt present; budget left",
    StepKind.TERMINAL_CLOSEOUT: "writeback and spend receipts of this identity; no other open todo",
}
_RECEIPTS = {
    StepKind.VALIDATION: "validation evidence",
    StepKind.DURABLE_WRITEBACK: "run id (runs/<run>.json, .md, index line)",
    StepKind.QUOTA_SPEND: "ledger event id",
    StepKind.TERMINAL_CLOSEOUT: "todo done, goal closed",
}
_OWNERS = {
    StepKind.VALIDATION: "agent",
    StepKind.DURABLE_WRITEBACK: "loopx",
    StepKind.QUOTA_SPEND: "loopx",
    StepKind.TERMINAL_CLOSEOUT: "loopx",
}


def build_plan(identity: SettlementIdentity, *, no_followup: bool = False) -> SettlementPlan:
    """The plan for a turn; terminal closeout only when the completion declares no follow-up."""
    kinds = [StepKind.VALIDATION, StepKind.DURABLE_WRITEBACK, StepKind.QUOTA_SPEND]
    if no_followup:
        if identity.todo_id is None:
            raise SettlementError(
                "invalid_identity", "terminal closeout needs a todo, not a replan obligation"
            )
        kinds.append(StepKind.TERMINAL_CLOSEOUT)
    steps = tuple(
        SettlementStep(
            kind=k,
            owner=_OWNERS[k],
            precondition=_PRECONDITIONS[k],
            idempotency_key=f"{identity.effect_id[:16]}:{k}",
            expected_receipt=_RECEIPTS[k],
        )
        for k in kinds
    )
    return SettlementPlan(identity, steps)
