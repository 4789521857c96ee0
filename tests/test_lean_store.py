"""The settlement store (`LeanSettleStore`) beside the file store: the same paths, and what opens it.

It reads and writes lean objects; every promise of the store interface that holds for lean
objects, it keeps: tests/test_store_contract.py runs those (`LEAN_TOO`) against it too.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from loopx_core.errors import LoopxError
from loopx_core.store.files import FileStore
from loopx_core.store.lean_store import LeanSettleStore, open_settle_store
from tests.pg import Cluster, cluster_fixture, team_project  # noqa: F401  (the session fixture pg_cluster)

PATHS: dict[str, Callable[[Any, str], object]] = {
    "registry": lambda s, _: s.registry_path,
    "goal dir": lambda s, x: s.goal_dir(x),
    "goal": lambda s, x: s.goal_path(x),
    "ledger": lambda s, x: s.ledger_path(x),
    "turn": lambda s, x: s.turn_path("g", x),
    "runs": lambda s, x: s.runs_dir(x),
    "receipts": lambda s, x: s.receipts_path(x),
    "scheduler": lambda s, x: s.scheduler_path(x),
    "lock": lambda s, x: s.lock_path(x),
}
NAMES = st.one_of(
    st.from_regex(r"[a-z0-9][a-z0-9._-]{0,63}", fullmatch=True),
    st.from_regex(r"sha256:[0-9a-f]{64}", fullmatch=True),
    st.text(max_size=70),
)


def _answer(call: Callable[[], object]) -> str:
    try:
        return str(call())
    except LoopxError as error:
        return f"{type(error).__name__}: {error.message}"


@settings(max_examples=300, deadline=None)
@given(name=NAMES, which=st.sampled_from(sorted(PATHS)), root=st.sampled_from(["/p", "/p/q r", "rel/x"]))
def test_the_string_paths_are_the_file_stores(name: str, which: str, root: str) -> None:
    lean_store, files = LeanSettleStore(root), FileStore(Path(root))
    assert _answer(lambda: PATHS[which](lean_store, name)) == _answer(lambda: PATHS[which](files, name))
    assert lean_store.root == files.root and str(lean_store.state_dir) == str(files.state_dir)


def test_a_settlement_command_opens_the_lean_store_of_its_project(
    tmp_path: Path, pg_cluster: Cluster
) -> None:
    from loopx_core.store.postgres.lean_store import LeanSettlePostgresStore

    files = tmp_path / "files"
    files.mkdir()
    FileStore(files).init()
    assert type(open_settle_store(str(files))) is LeanSettleStore
    assert type(open_settle_store(files)) is LeanSettleStore
    _, team = team_project(tmp_path / "team", pg_cluster, todos=1)
    team.close()
    opened = open_settle_store(str(tmp_path / "team"))
    try:
        assert type(opened) is LeanSettlePostgresStore
        assert type(opened.read_goal("g")).__module__ == "loopx_core.models.lean"
    finally:
        opened.close()
