"""`loopx status` reads the registry once, however many goals: its cost grows with the work."""

from __future__ import annotations

from pathlib import Path

import pytest

from loopx_core.ops import goals
from loopx_core.status import attention
from loopx_core.store.files import FileStore
from tests.conftest import T0


def test_status_reads_the_registry_once_for_any_number_of_goals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = FileStore(tmp_path)
    store.init()
    for n in range(25):
        goals.add_goal(store, f"g{n}", "Objective", T0)
    reads = []
    real = FileStore.read_registry
    monkeypatch.setattr(FileStore, "read_registry", lambda self: reads.append(1) or real(self))
    assert len(attention(store, T0)) == 25
    assert len(reads) == 1
