"""The dashboard keeps what its pages read while a goal is unchanged, and never shows it stale.

`views.ReadCache` keeps a goal's records under the goal's token (`watch.Tokens`): the file
store's stats of its files, PostgreSQL's row versions. The class of defect this guards is a
token that stays while content moves: after any sequence of writes (todos, claims, spends,
gates, settled turns, agents, the clock moving, a damaged file), every page rendered with the
kept reads equals the page rendered from scratch, on both stores.

On the file store each step's writes are dated a second apart (as the steps of a real loop
are): a file written within `watch.RACY_NS` of the page is never kept at all, since its stat
cannot yet tell two contents apart; a test below shows that rule.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.dashboard import views
from loopx_core.dashboard.watch import RACY_NS, Tokens, tokener
from loopx_core.errors import LoopxError
from loopx_core.kernel.algebra import StepKind
from loopx_core.ops import gates, goals, spend, todos
from loopx_core.settlement.steps import TurnContext
from loopx_core.settlement.turns import begin_turn, settle_steps
from loopx_core.store.base import Store
from loopx_core.store.choice import open_target, record
from loopx_core.store.files import FileStore
from tests.conftest import T0
from tests.pg import Cluster, cluster_fixture  # noqa: F401  (the session fixture pg_cluster)

GOALS = ("g1", "g2")
OPS = ("todo", "claim", "complete", "spend", "gate", "begin", "settle", "agent", "tick", "damage")
Step = tuple[str, str, int]


class Scenario:
    """A project on one store, its clock, and the dashboard's kept reads."""

    def __init__(self, store: Store, age: Callable[[], None]) -> None:
        self.store = store
        self.age = age
        self.now = T0
        self.cache = views.ReadCache()
        self.tokens = tokener(store)
        for goal_id in GOALS:
            goals.add_goal(store, goal_id, f"Objective {goal_id}", T0)
        goals.register_agent(store, "a", ["python"], T0)
        self.count = 0
        self.open: dict[str, tuple[str, str]] = {}
        """goal -> (turn key, todo id) of the turn begun and not yet settled."""

    def apply(self, op: str, goal_id: str, n: int) -> None:
        """One write (a refusal is a step too: it must change nothing)."""
        self.count += 1
        store, now = self.store, self.now
        try:
            if op == "todo":
                todos.add_todo(store, goal_id, f"Todo {self.count}", now)
            elif op == "claim":
                todos.claim_todo(store, goal_id, f"t{n}", "a", now)
            elif op == "complete":
                todos.complete_todo(store, goal_id, f"t{n}", now, agent_id="a")
            elif op == "spend":
                spend.spend(store, goal_id, "a", now, slots=1 + n % 2, turn_instance_id=f"spend-{self.count}")
            elif op == "gate":
                gates.open_gate(store, goal_id, f"Gate {self.count}", now)
            elif op == "begin":
                self.begin(goal_id)
            elif op == "settle" and goal_id in self.open:
                # n == 1: only the validation step, which moves nothing but the journal
                self.settle(goal_id, *self.open[goal_id], whole=n != 1)
                if n != 1:
                    del self.open[goal_id]
            elif op == "agent":
                goals.register_agent(store, f"b{n}", ["python", f"c{self.count}"], now)
            elif op == "tick":
                self.now += timedelta(minutes=7 * (n + 1))
            elif op == "damage" and isinstance(store, FileStore):
                (store.root / ".loopx/goals" / goal_id / "state.json").write_text("{")
        except LoopxError:
            pass
        self.age()

    def begin(self, goal_id: str) -> None:
        """Begin a turn on a new todo (its journal is written now, settled by a later step)."""
        todo = todos.add_todo(self.store, goal_id, f"Turn {self.count}", self.now)
        journal, _ = begin_turn(self.store, goal_id, "a", self.now, todo_id=todo.todo_id)
        self.open[goal_id] = (journal.turn_key, todo.todo_id)

    def settle(self, goal_id: str, turn_key: str, todo_id: str, *, whole: bool) -> None:
        """Settle a begun turn for real (its journal moves, a run, a history line and a spend), or
        only validate it (`whole` False: its journal alone moves)."""
        ctx = TurnContext(
            self.store,
            goal_id,
            "a",
            turn_key,
            lambda: self.now,
            todo_id=todo_id,
            summary=f"turn {self.count}",
            evidence=["checked"],
            validation_passed=True,
            changed_files=["x.py"],
            slots=1,
        )
        steps = [StepKind.VALIDATION, StepKind.DURABLE_WRITEBACK, StepKind.QUOTA_SPEND]
        settle_steps(ctx, steps if whole else steps[:1], adapter="test")

    def pages_agree(self) -> None:
        """Every page with the kept reads equals the page read from scratch."""
        tokens = self.cache.renew(self.tokens())
        kept = {"cache": self.cache, "tokens": tokens}
        assert views.attention_page(self.store, self.now, **kept) == views.attention_page(
            self.store, self.now
        )
        for goal_id in GOALS:
            assert _page(views.goal_page, self.store, goal_id, self.now, **kept) == _page(
                views.goal_page, self.store, goal_id, self.now
            )
        facades: list[dict[str, object]] = []
        assert views.agents_page(self.store, self.now, facades=facades, **kept) == views.agents_page(
            self.store, self.now, facades=facades
        )


def _page(render: Callable[..., dict[str, object]], *args: object, **kwargs: object) -> object:
    try:
        return render(*args, **kwargs)
    except LoopxError as exc:  # a damaged goal: the same error either way
        return (type(exc).__name__, exc.message)


def aged(root: Path) -> Callable[[], None]:
    """Date every file written since the last step one second after the previous step's."""
    clock = [time.time() - 3600]

    def age() -> None:
        clock[0] += 1
        recent = time.time_ns() - RACY_NS
        for folder, dirs, files in os.walk(root / ".loopx"):
            for name in [*dirs, *files, "."]:
                path = os.path.join(folder, name)
                if os.lstat(path).st_mtime_ns > recent:
                    os.utime(path, (clock[0], clock[0]), follow_symlinks=False)

    return age


steps = st.lists(st.tuples(st.sampled_from(OPS), st.sampled_from(GOALS), st.integers(1, 4)), max_size=10)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(script=steps)
def test_kept_reads_equal_fresh_reads_on_the_file_store(
    tmp_path_factory: pytest.TempPathFactory, script: list[Step]
) -> None:
    root = tmp_path_factory.mktemp("kept")
    store = FileStore(root)
    store.init()
    scenario = Scenario(store, aged(root))
    scenario.age()
    scenario.pages_agree()
    for step in script:
        scenario.apply(*step)
        scenario.pages_agree()
        scenario.pages_agree()  # the second page reads nothing again, and agrees too


@pytest.fixture
def team_store(
    tmp_path_factory: pytest.TempPathFactory, pg_cluster: Cluster
) -> Iterator[Callable[[], tuple[Store, str]]]:
    """A factory of fresh PostgreSQL stores (one schema each) and their DSNs, closed at the end."""
    opened: list[Store] = []

    def fresh() -> tuple[Store, str]:
        root = tmp_path_factory.mktemp("team")
        dsn = pg_cluster.fresh_schema()
        store = open_target(root, dsn)
        store.init()
        record(root, dsn)
        opened.append(store)
        return store, dsn

    yield fresh
    for store in opened:
        store.close()  # type: ignore[attr-defined]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(script=steps)
def test_kept_reads_equal_fresh_reads_on_postgresql(
    team_store: Callable[[], tuple[Store, str]], script: list[Step]
) -> None:
    scenario = Scenario(team_store()[0], lambda: None)
    scenario.pages_agree()
    for step in script:
        scenario.apply(*step)
        scenario.pages_agree()


class Counting:
    """A store that counts the ledger and goal reads it serves."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self.reads = 0

    def __getattr__(self, name: str) -> object:
        attr = getattr(self._store, name)
        if name in ("read_goal", "ledger_since"):
            self.reads += 1
        return attr


def test_an_unchanged_goal_is_read_once_and_a_changed_one_again(tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    store.init()
    scenario = Scenario(store, aged(tmp_path))
    scenario.age()
    counting = Counting(store)
    cache = views.ReadCache()

    def page(now: datetime) -> int:
        before = counting.reads
        tokens = cache.renew(tokener(store)())
        views.attention_page(counting, now, cache=cache, tokens=tokens)  # type: ignore[arg-type]
        return counting.reads - before

    assert page(T0) == 2 * len(GOALS)  # each goal's state and ledger tail
    assert page(T0 + timedelta(minutes=5)) == 0  # a later window is the kept tail, filtered
    todos.add_todo(store, "g1", "A change", T0)
    scenario.age()
    assert page(T0 + timedelta(minutes=6)) == 2  # g1 only
    assert page(T0 - timedelta(days=2)) == len(GOALS)  # an earlier window than kept: each tail read


def test_a_goal_written_a_moment_ago_is_never_kept(project: object, tmp_path: Path) -> None:
    store = FileStore(tmp_path)
    store.init()
    goals.add_goal(store, "g1", "Objective", T0)
    tokens = tokener(store)()
    assert isinstance(tokens, Tokens) and "g1" in tokens.racy and None in tokens.racy
    cache = views.ReadCache()
    views.attention_page(store, T0, cache=cache, tokens=cache.renew(tokens))
    assert cache.entries == {}


ROW_COLUMNS = {"loopx_registry": "doc", "loopx_goals": "doc", "loopx_scheduler": "doc"}
"""Each PostgreSQL table whose rewritable rows a page keeps (`views.KEPT`), and a column to
rewrite: the ledger and the run index are append-only (a new row is a new seq or position),
journals and runs are read afresh by each page."""


@pytest.mark.parametrize("table", sorted(ROW_COLUMNS))
def test_rewriting_any_row_a_page_reads_moves_its_token(
    team_store: Callable[[], tuple[Store, str]], table: str
) -> None:
    import psycopg

    from loopx_core.ops.scheduler import ack

    store, dsn = team_store()
    scenario = Scenario(store, lambda: None)
    scenario.begin("g1")
    scenario.settle("g1", *scenario.open["g1"], whole=True)
    ack(store, "g1", "a", T0, rrule="FREQ=MINUTELY;INTERVAL=10")
    before = tokener(store)()
    with psycopg.connect(dsn, autocommit=True) as conn:
        # the same content written again: only the row version moves, as a same-size rewrite would
        column = ROW_COLUMNS[table]
        where = "" if table == "loopx_registry" else " WHERE goal_id = 'g1'"
        assert conn.execute(f"UPDATE {table} SET {column} = {column}{where}").rowcount >= 1  # type: ignore[arg-type]
    after = tokener(store)()
    if table == "loopx_registry":
        assert after.registry != before.registry and after.goals == before.goals
    else:
        assert after.goals["g1"] != before.goals["g1"] and after.goals["g2"] == before.goals["g2"]
