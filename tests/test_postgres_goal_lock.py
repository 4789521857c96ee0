"""The PostgreSQL store's goal lock: re-entrant in a thread, exclusive between connections.

`goal_lock(g)` is one transaction holding the goal's advisory lock. Taken again inside its
own block (a command's step that locks the goal itself) it joins that transaction: the inner
writes commit with the outer block, and a failure anywhere rolls back both. Another store
(another process's connection) waiting for the lock gives up after `LOOPX_LOCK_TIMEOUT` with
a lock-timeout error (exit 6) in one line naming the store redacted, changing nothing; once the
holder is done it gets the lock at once.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from loopx_core.errors import ExitCode, LoopxError
from loopx_core.ops import goals
from loopx_core.store.choice import open_target
from loopx_core.store.postgres import PostgresStore
from tests.conftest import T0
from tests.pg import Cluster, cluster_fixture  # noqa: F401  (the session fixture pg_cluster)


@pytest.fixture
def stores(tmp_path: Path, pg_cluster: Cluster) -> Iterator[tuple[PostgresStore, PostgresStore]]:
    """Two stores (two connections) on one initialised schema holding goal `g`."""
    dsn = pg_cluster.fresh_schema()
    (tmp_path / "p").mkdir()
    one, two = open_target(tmp_path / "p", dsn), open_target(tmp_path / "p", dsn)
    assert isinstance(one, PostgresStore) and isinstance(two, PostgresStore)
    one.init()
    goals.add_goal(one, "g", "Objective", T0)
    yield one, two
    one.close()
    two.close()


def test_a_nested_goal_lock_joins_the_outer_transaction(stores: tuple[PostgresStore, PostgresStore]) -> None:
    one, two = stores
    with one.goal_lock("g"):
        one.update_goal("g", lambda s: s.evidence.append("outer"))
        with one.goal_lock("g"):
            one.update_goal("g", lambda s: s.evidence.append("inner"))
        assert two.read_goal("g").evidence == []  # nothing committed before the outer block ends
    assert two.read_goal("g").evidence == ["outer", "inner"]
    with pytest.raises(RuntimeError), one.goal_lock("g"):
        with one.goal_lock("g"):
            one.update_goal("g", lambda s: s.evidence.append("lost"))
        raise RuntimeError("the outer block failed after the inner one ended")
    assert two.read_goal("g").evidence == ["outer", "inner"]


def test_a_held_lock_times_out_another_connection_in_one_line(
    stores: tuple[PostgresStore, PostgresStore], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    one, two = stores
    monkeypatch.setenv("LOOPX_LOCK_TIMEOUT", "1")
    with one.goal_lock("g"):
        one.update_goal("g", lambda s: s.evidence.append("held"))
        started = time.monotonic()
        with pytest.raises(LoopxError) as caught, two.goal_lock("g"):
            two.update_goal("g", lambda s: s.evidence.append("never"))
        waited = time.monotonic() - started
    assert caught.value.exit_code == ExitCode.LOCK_TIMEOUT, caught.value.message
    assert "\n" not in caught.value.message and str(tmp_path) not in caught.value.message
    assert 0.9 <= waited < 10
    assert two.read_goal("g").evidence == ["held"]
    with two.goal_lock("g"):  # released: taken at once
        two.update_goal("g", lambda s: s.evidence.append("after"))
    assert one.read_goal("g").evidence == ["held", "after"]
