"""`loopx status` reads the registry once, however many goals: its cost grows with the work.

Counted, not timed: every store read and every schema validation `attention` makes, for 10,
100 and 1,000 goals of 10 todos each. The registry is read and validated exactly once; every
other read is a fixed number per goal, so the total is linear in the goals.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from benchmarks.scenario import many_goals
from loopx_core.ops import goals
from loopx_core.status import attention
from loopx_core.store import atomic, files
from loopx_core.store.files import FileStore
from tests.conftest import T0

READS = ("read_registry", "read_goal", "ledger_since", "read_scheduler", "read_history", "read_journal")


def counting(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Count each store read and each file validation (by model) from now on."""
    counts: Counter[str] = Counter()

    def wrap(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            counts[name] += 1
            return real(*args, **kwargs)

        return counted

    for name in READS:
        monkeypatch.setattr(FileStore, name, wrap(name, getattr(FileStore, name)))
    real_read_record = atomic.read_record

    def read_record(path: Path, model: type, **kwargs: Any) -> Any:
        counts[f"validate {model.__name__}"] += 1
        return real_read_record(path, model, **kwargs)

    monkeypatch.setattr(files, "read_record", read_record)
    return counts


def test_status_reads_the_registry_once_for_any_number_of_goals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = FileStore(tmp_path)
    store.init()
    for n in range(25):
        goals.add_goal(store, f"g{n}", "Objective", T0)
    counts = counting(monkeypatch)
    assert len(attention(store, T0)) == 25
    assert counts["read_registry"] == 1 and counts["validate Registry"] == 1


@pytest.mark.parametrize("size", [10, 100, 1000])
def test_status_cost_is_linear_in_goals(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: int) -> None:
    store = many_goals(tmp_path, size, 10, T0)
    counts = counting(monkeypatch)
    rows = attention(store, T0)
    assert len(rows) == size and all(r["todos_open"] == 10 for r in rows)
    assert counts.pop("read_registry") == 1 and counts.pop("validate Registry") == 1
    # every other read happens once per goal, the same for 10 goals as for 1,000
    assert counts == Counter(
        {
            "read_goal": size,
            "validate GoalState": size,
            "ledger_since": size,
            "read_history": size,
        }
    )
