"""Kills the survivors of `make mutate MODULES=loopx_core/ops/lease.py` (docs/testing.md).

The claim's refusals were reached only through `loopx` subprocesses, which run the unmutated
package: here each refusal is asked for in-process, and its kind, step and message checked,
with nothing written; the lease renewal is checked for the expiry it sets.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from loopx_core.errors import ConflictError, NotFoundError
from loopx_core.kernel.algebra import FailureKind, SettlementFailure, SettlementReceipt
from loopx_core.models import codec
from loopx_core.models.identity import SettlementIdentity
from loopx_core.ops import gates, todos
from loopx_core.ops.lease import hold_lease, lease_todo
from loopx_core.store.files import FileStore
from tests.builders import build_project, tree
from tests.conftest import T0


def claim(store: FileStore, todo_id: str = "t1", agent: str = "builder") -> SettlementFailure | None:
    """`agent`'s claim of `todo_id` for 30 minutes; its failure (None: leased)."""
    identity = SettlementIdentity("g", agent, todo_id, "claim-1")
    return lease_todo(store, identity, T0, lease_minutes=30).failure


def test_a_todo_the_agent_may_not_take_is_refused_at_validation_writing_nothing(tmp_path: Path) -> None:
    store = build_project(tmp_path, todo_count=0)
    todos.add_todo(store, "g", "Theirs", T0, todo_id="t1", bound_agent="other")
    before = tree(tmp_path)
    assert claim(store) == SettlementFailure(
        FailureKind.PERMISSION_DENIED, "validation", "agent 'builder' may not take todo 't1': bound_to_other"
    )
    assert tree(tmp_path) == before


@pytest.mark.parametrize("blocks", [None, "builder"])
def test_an_agent_behind_an_operator_gate_is_refused_naming_the_gate(
    tmp_path: Path, blocks: str | None
) -> None:
    store = build_project(tmp_path)
    gates.open_gate(store, "g", "Approve the plan", T0, gate_id="approve", blocks_agent=blocks)
    before = codec.line(store.read_goal("g")).decode()
    assert claim(store) == SettlementFailure(
        FailureKind.PERMISSION_DENIED, "validation", "agent 'builder' is behind an operator gate: approve"
    )
    assert codec.line(store.read_goal("g")).decode() == before


def test_a_gate_for_another_agent_does_not_stop_the_claim(tmp_path: Path) -> None:
    store = build_project(tmp_path)
    gates.open_gate(store, "g", "Approve the plan", T0, gate_id="approve", blocks_agent="other")
    assert claim(store) is None
    assert store.read_goal("g").todo("t1").claimed_by == "builder"  # type: ignore[union-attr]


def test_an_agent_with_a_blocking_todo_is_refused_another(tmp_path: Path) -> None:
    store = build_project(tmp_path, todo_count=1)
    todos.add_todo(store, "g", "Fix the build first", T0, todo_id="fix", blocks_agent="builder")
    assert claim(store) == SettlementFailure(
        FailureKind.PERMISSION_DENIED, "validation", "agent 'builder' must finish its blocking todo first"
    )
    assert claim(store, "fix") is None


def test_holding_a_lease_sets_its_expiry_from_now(tmp_path: Path) -> None:
    store = build_project(tmp_path)
    assert claim(store) is None
    identity = SettlementIdentity("g", "builder", "t1", "claim-1")
    later = T0 + timedelta(minutes=20)
    assert hold_lease(store, identity, later, lease_minutes=45) is None
    todo = store.read_goal("g").todo("t1")
    assert todo is not None
    assert todo.lease_expires_at == later + timedelta(minutes=45)
    assert todo.updated_at == later
    assert todo.claimed_at == T0  # a renewal keeps the first claim's time


def test_holding_a_lost_lease_says_why_and_writes_nothing(tmp_path: Path) -> None:
    store = build_project(tmp_path)
    assert claim(store, agent="other") is None
    before = tree(tmp_path)
    lost = hold_lease(store, SettlementIdentity("g", "builder", "t1", "x"), T0, lease_minutes=30)
    assert lost == (FailureKind.LEASE_LOST, "todo 't1' is held by 'other': agent 'builder' lost its lease")
    assert tree(tmp_path) == before


def test_a_todo_another_agent_holds_is_a_conflict_naming_holder_and_expiry(tmp_path: Path) -> None:

    store = build_project(tmp_path)
    assert claim(store, agent="other") is None
    with pytest.raises(ConflictError, match=r"^todo 't1' is claimed by 'other' until 2026-11-29T12:30:00Z$"):
        claim(store)
    with pytest.raises(NotFoundError, match=r"^todo 'nope' not found in goal 'g'$"):
        claim(store, "nope")


def test_a_claim_proves_its_validation_and_its_lease_write(tmp_path: Path) -> None:
    store = build_project(tmp_path)
    identity = SettlementIdentity("g", "builder", "t1", "claim-1")
    result = lease_todo(store, identity, T0, lease_minutes=30)
    prefix = identity.effect_id[:16]
    assert len(prefix) == 16
    assert result.receipts == (
        SettlementReceipt("validation", f"{prefix}:lease_validation", identity.effect_id, {"todo_id": "t1"}),
        SettlementReceipt(
            "durable_writeback",
            f"{prefix}:lease_write",
            identity.effect_id,
            {"todo_id": "t1", "lease_expires_at": (T0 + timedelta(minutes=30)).isoformat()},
        ),
    )
    assert result.effects == ("lease:t1",)
    assert result.failure is None
