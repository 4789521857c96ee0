"""Class: a `goal add` that dies between its two writes leaves the goal impossible to add.

Observed: `goal add` writes the goal's empty state, then its registry entry. A process that died
(or a registry write that failed: a full disk, a byte that is not UTF-8) in between left a state
no registry knew, and every later `goal add` answered "already has a state file". Now an add
adopts the untouched state such an add leaves, and refuses (exit 5, nothing written) a state
with anything in it, which only a registry that lost its entry could leave behind.

Proved with a real kill between the two writes (`LOOPX_FAULT=after:goal_state`), then with
generated orphan states: exactly the empty state is adopted, any other one is refused.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.faults import FAULT_EXIT_CODE
from loopx_core.models.constants import SCHEMA_VERSION
from loopx_core.models.records import GoalState, Todo
from loopx_core.store.files import FileStore
from tests.builders import tree
from tests.conftest import T0, Cli, Project, run_loopx


def test_an_add_killed_between_its_writes_can_be_retried(project: Project) -> None:
    killed = run_loopx(
        "goal", "add", "-g", "g", "-o", "Ship it", root=project.root, env={"LOOPX_FAULT": "after:goal_state"}
    )
    assert killed.exit_code == FAULT_EXIT_CODE
    assert project.state_file("g").exists() and "g" not in project.store.read_registry().goals

    again = run_loopx("goal", "add", "-g", "g", "-o", "Ship it", "-f", "json", root=project.root)
    assert again.exit_code == 0, again.stderr
    assert project.store.read_registry().goals["g"].objective == "Ship it"
    added = run_loopx("todo", "add", "-g", "g", "--title", "First", "-f", "json", root=project.root)
    assert added.exit_code == 0 and project.store.read_goal("g").todos[0].title == "First"


def test_a_second_add_of_an_existing_goal_is_still_a_conflict(cli: Cli, project: Project) -> None:
    assert cli("goal", "add", "-g", "g", "-o", "Ship it").exit_code == 0
    before = tree(project.root)
    again = cli("goal", "add", "-g", "g", "-o", "Other")
    assert again.exit_code == 5 and "already exists" in again.stderr
    assert tree(project.root) == before


orphans = st.builds(
    GoalState,
    schema_version=st.just(SCHEMA_VERSION),
    goal_id=st.just("g"),
    version=st.integers(0, 3),
    next_todo_number=st.integers(1, 3),
    todos=st.lists(
        st.builds(
            Todo, todo_id=st.just("t1"), title=st.just("Kept"), created_at=st.just(T0), updated_at=st.just(T0)
        ),
        max_size=1,
    ),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(orphan=orphans)
def test_only_the_untouched_state_is_adopted(tmp_path_factory, orphan: GoalState) -> None:  # type: ignore[no-untyped-def]
    root: Path = tmp_path_factory.mktemp("orphan")
    store = FileStore(root)
    store.init()
    store.create_goal(orphan)
    before = tree(root)
    result = run_loopx("goal", "add", "-g", "g", "-o", "Ship it", root=root)
    if orphan.dump() == GoalState(schema_version=SCHEMA_VERSION, goal_id="g").dump():
        assert result.exit_code == 0, result.stderr
        assert "g" in store.read_registry().goals
    else:
        assert result.exit_code == 5, result.stderr
        assert "has a state but no registry entry" in result.stderr
        assert result.stderr.count("\n") == 1 and str(root) not in result.stderr
        assert tree(root) == before


def test_an_unreadable_orphan_state_is_refused_as_unreadable(project: Project) -> None:
    killed = run_loopx(
        "goal", "add", "-g", "g", "-o", "Ship it", root=project.root, env={"LOOPX_FAULT": "after:goal_state"}
    )
    assert killed.exit_code == FAULT_EXIT_CODE
    project.state_file("g").write_text("{broken")
    before = tree(project.root)
    again = run_loopx("goal", "add", "-g", "g", "-o", "Ship it", root=project.root)
    assert again.exit_code == 5 and "the state cannot be read" in again.stderr, again.stderr
    assert again.stderr.count("\n") == 1 and str(project.root) not in again.stderr
    assert tree(project.root) == before
