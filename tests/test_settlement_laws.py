"""The five settlement laws, over the real steps on a real store (property-based where it fits)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.kernel.algebra import FailureKind, SettlementResult, Step, compose, noop
from loopx_core.settlement.steps import durable_writeback, quota_spend, validation
from tests.turns import Turn, begun_turn

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


_BASE: list[Path] = []


@pytest.fixture(autouse=True, scope="module")
def _inside_pytest_tmp(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Examples' folders live under pytest's temporary root, which pytest cleans up."""
    _BASE[:] = [tmp_path_factory.mktemp("laws")]


def fresh() -> Turn:
    """A new project in a new folder (hypothesis runs many examples per test)."""
    return begun_turn(Path(tempfile.mkdtemp(dir=_BASE[0], prefix="law-")))


def observe(result: SettlementResult) -> tuple:  # type: ignore[type-arg]
    """What a law compares: receipts (without replay flags), effects, the failure."""
    receipts = tuple((r.step, r.idempotency_key, tuple(sorted(r.detail.items()))) for r in result.receipts)
    failure = (result.failure.kind, result.failure.step) if result.failure else None
    return receipts, result.effects, failure


def steps_for(turn: Turn, **ctx: object) -> list[Step]:
    c = turn.ctx(**ctx)
    return [validation(c), durable_writeback(c), quota_spend(c)]


def run(turn: Turn, step: Step) -> SettlementResult:
    return step(SettlementResult(turn.journal.settlement_identity()))


@SETTINGS
@given(st.lists(st.integers(0, 3), max_size=4))
def test_identity_noop_changes_no_receipt(positions: list[int]) -> None:
    plain, padded = fresh(), fresh()
    baseline = run(plain, compose(*steps_for(plain)))
    steps = steps_for(padded)
    for pos in sorted(positions, reverse=True):
        steps.insert(pos, noop)
    assert observe(run(padded, compose(*steps))) == observe(baseline)
    assert padded.runs() and len(padded.spends()) == 1


def _group(steps: list[Step], cuts: list[int]) -> Step:
    """Regroup `steps` into nested compositions at the given cut points."""
    if len(steps) <= 1 or not cuts:
        return compose(*steps)
    cut = cuts[0] % (len(steps) - 1) + 1
    return compose(_group(steps[:cut], cuts[1:]), _group(steps[cut:], cuts[1:]))


@SETTINGS
@given(st.lists(st.integers(0, 10), min_size=1, max_size=4), st.sampled_from([None, "validation"]))
def test_associativity_regrouping_changes_nothing(cuts: list[int], failing: str | None) -> None:
    flat, grouped = fresh(), fresh()
    ctx = {"validation_passed": failing is None}
    a = run(flat, compose(*steps_for(flat, **ctx)))
    b = run(grouped, _group(steps_for(grouped, **ctx), cuts))
    assert observe(a) == observe(b)
    assert (len(flat.spends()), len(flat.runs())) == (len(grouped.spends()), len(grouped.runs()))


def test_ordered_short_circuit_keeps_the_kind(tmp_path: Path) -> None:
    turn = begun_turn(tmp_path)
    result = run(turn, compose(*steps_for(turn, validation_passed=False)))
    assert result.failure is not None
    assert (result.failure.kind, result.failure.step) == (FailureKind.WRITEBACK_REJECTED, "validation")
    assert result.receipts == () and result.effects == ()
    assert turn.runs() == [] and turn.spends() == []


def test_short_circuit_after_cancel(tmp_path: Path) -> None:
    from loopx_core.settlement.turns import cancel_turn
    from tests.conftest import T0

    turn = begun_turn(tmp_path)
    cancel_turn(turn.store, "g", "builder", turn.key, T0, "changed plans")
    result = run(turn, compose(*steps_for(turn)))
    assert result.failure is not None and result.failure.kind == FailureKind.CANCELLED
    assert turn.spends() == [] and turn.runs() == []


@SETTINGS
@given(st.lists(st.integers(0, 2), min_size=1, max_size=8))
def test_replay_never_duplicates(retries: list[int]) -> None:
    """Any sequence of retried prefixes, then the whole plan: one writeback, one spend, same receipts."""
    turn = fresh()
    for upto in retries:
        run(turn, compose(*steps_for(turn)[: upto + 1]))
    first = run(turn, compose(*steps_for(turn)))
    final = run(turn, compose(*steps_for(turn)))
    assert observe(first)[0] == observe(final)[0]
    assert final.ok and all(r.replayed for r in final.receipts) and final.effects == ()
    assert len(turn.runs()) == 1 and len(turn.spends()) == 1
    again = fresh()
    assert observe(final)[0] == observe(run(again, compose(*steps_for(again))))[0]


def test_non_commutativity_spend_before_writeback_is_refused(tmp_path: Path) -> None:
    turn = begun_turn(tmp_path)
    check, write, spend = steps_for(turn)
    swapped = run(turn, compose(check, spend, write))
    assert swapped.failure is not None
    assert (swapped.failure.kind, swapped.failure.step) == (FailureKind.WRITEBACK_MISSING, "quota_spend")
    assert turn.spends() == [] and turn.runs() == []
    ordered = run(turn, compose(check, write, spend))
    assert ordered.ok and len(turn.spends()) == 1
