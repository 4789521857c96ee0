"""Store operations shared by the store tests: a goal to work on, and generated sequences of
real ops with each outcome (or refusal) as text, to run against two stores and compare."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import strategies as st

from loopx_core.errors import ConflictError, NotFoundError, UsageError
from loopx_core.ops import goals, spend, todos
from loopx_core.store.base import Store
from tests.conftest import T0


def with_goal(store: Store) -> Store:
    """`store` with goal g and agent a."""
    goals.add_goal(store, "g", "Objective", T0)
    goals.register_agent(store, "a", [], T0)
    return store


OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("todo"), st.text("abc xyz", min_size=1, max_size=8)),
        st.tuples(st.just("claim"), st.integers(1, 4)),
        st.tuples(st.just("spend"), st.integers(1, 6)),
        st.tuples(st.just("void"), st.integers(1, 6)),
        st.tuples(st.just("evidence"), st.text("pq", min_size=1, max_size=4)),
        st.tuples(st.just("agent"), st.sampled_from(["a", "b", "c"])),
    ),
    max_size=12,
)
"""Up to a dozen of: add a todo, claim one, spend, void, add goal evidence, register an agent."""


def apply(store: Store, operations: list[tuple[str, object]]) -> list[str]:
    """Run the operations through the real ops; each outcome (or refusal) as text."""
    outcomes = []
    for n, (name, arg) in enumerate(operations):
        at = T0 + timedelta(minutes=n)
        try:
            if name == "todo":
                outcomes.append(todos.add_todo(store, "g", str(arg), at).todo_id)
            elif name == "claim":
                outcomes.append(todos.claim_todo(store, "g", f"t{arg}", "a", at).status)
            elif name == "spend":
                outcomes.append(
                    spend.spend(store, "g", "a", at, slots=1, turn_instance_id=f"ti-{arg}").event.event_id
                )
            elif name == "void":
                outcomes.append(spend.void(store, "g", f"ev-{arg}", at).event.event_id)
            elif name == "evidence":
                store.update_goal("g", lambda s, e=str(arg): s.evidence.append(e))
                outcomes.append("ok")
            else:
                outcomes.append(goals.register_agent(store, str(arg), [], at).agent_id)
        except (ConflictError, NotFoundError, UsageError) as error:
            outcomes.append(type(error).__name__)
        except Exception as error:  # a refusal of another kind still has to match
            outcomes.append(type(error).__name__)
    return outcomes
