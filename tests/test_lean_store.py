"""The store contract (tests/test_store_contract.py), run against the settlement store too.

`LeanSettleStore` reads and writes lean objects; every promise of the store interface that
a file store keeps, it keeps: the contract's own tests run here against it, unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from loopx_core.store.lean_store import LeanSettleStore
from tests.test_store_contract import (  # noqa: F401  (collected here, run against the lean store)
    test_a_held_lock_times_out_as_lock_timeout,
    test_a_settled_turn_leaves_the_same_records,
    test_a_spend_is_charged_once_per_turn,
    test_every_goal_entry_point_checks_the_id,
    test_goal_state_compare_and_swap,
    test_history_and_run_records_read_back,
    test_journals,
    test_ledger_appends_in_order_and_keeps_time_non_decreasing,
    test_lifecycle,
    test_receipts_are_found_however_long_ago,
    test_registry_updates_are_all_or_nothing,
    test_runs_are_indexed_once,
    test_the_goal_lock_is_reentrant_in_a_thread_and_exclusive_across_threads,
    test_threads_lose_no_update,
)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[LeanSettleStore]:
    """An initialised, empty settlement store."""
    root = tmp_path / "project"
    root.mkdir()
    made = LeanSettleStore(root)
    assert made.init() is True
    yield made
