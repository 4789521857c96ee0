"""Class: no id reaches outside `.loopx/`, and no message shows a local path.

An id is checked before it names any file, lock files included (a goal id of
`../../tmp/x` once created `/tmp/x.lock` while the command itself exited 2).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.errors import LoopxError, UsageError
from loopx_core.ops import goals, spend, todos
from loopx_core.store.files import FileStore
from tests.conftest import T0, run_loopx

HOSTILE = st.one_of(
    st.sampled_from(
        ["../x", "../../../../tmp/pwned", "/tmp/abs", "a/b", "..", ".", "a\n", "A", "", "a" * 65]
    ),
    st.text(min_size=1, max_size=80).filter(
        lambda s: "/" in s or ".." in s or s != s.strip() or not s.isascii()
    ),
)


def _files(top: Path) -> set[str]:
    return {str(p.relative_to(top)) for p in top.rglob("*")}


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(bad=HOSTILE)
def test_a_hostile_goal_id_names_no_file_anywhere(tmp_path_factory: pytest.TempPathFactory, bad: str) -> None:
    top = tmp_path_factory.mktemp("top")
    root = top / "project"
    root.mkdir()
    store = FileStore(root)
    store.init()
    goals.add_goal(store, "g", "Objective", T0)
    goals.register_agent(store, "a", [], T0)
    before = _files(top)
    calls = [
        lambda: store.update_goal(bad, lambda s: None),
        lambda: store.read_goal(bad),
        lambda: store.goal_lock(bad).__enter__(),
        lambda: store.append_event(bad, lambda seq, last: None),  # type: ignore[arg-type,return-value]
        lambda: store.spend_receipt(bad, "x"),
        lambda: todos.add_todo(store, bad, "t", T0),
        lambda: spend.spend(store, bad, "a", T0, slots=1),
        lambda: goals.add_goal(store, bad, "Objective", T0),
    ]
    for call in calls:
        with pytest.raises(LoopxError) as refused:
            call()
        assert isinstance(refused.value, UsageError) or refused.value.exit_code in (3, 7)
    assert _files(top) == before


def test_the_cli_refuses_a_climbing_goal_id_without_creating_a_lock(tmp_path: Path) -> None:
    root = tmp_path / "deep" / "er" / "project"
    root.mkdir(parents=True)
    store = FileStore(root)
    store.init()
    goals.register_agent(store, "builder", [], T0)
    before = _files(tmp_path)
    result = run_loopx("todo", "claim", "-g", "../../../../pwned", "-t", "t1", "-a", "builder", root=root)
    assert result.exit_code == 2, result.stderr
    assert _files(tmp_path) == before


def test_no_state_here_names_no_path(tmp_path: Path) -> None:
    result = run_loopx("status", root=tmp_path)
    assert result.exit_code == 3
    assert str(tmp_path) not in result.stderr and "loopx init" in result.stderr
