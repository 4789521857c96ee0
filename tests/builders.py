"""The one way tests build state: a project with a goal, agents and todos, and settled turns.

Everything goes through the real operations (no hand-written state files), so a test's
setup can never drift from what the CLI and the MCP server would have written.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from loopx_core.kernel.algebra import StepKind
from loopx_core.models.records import TurnJournal
from loopx_core.ops import goals, todos
from loopx_core.settlement.steps import TurnContext
from loopx_core.settlement.turns import begin_turn, record_host_phases, settle_steps
from loopx_core.store.files import FileStore
from tests.conftest import T0, run_loopx

SETTLE = (StepKind.VALIDATION, StepKind.DURABLE_WRITEBACK, StepKind.QUOTA_SPEND)


def build_project(
    root: Path,
    *,
    goal: str = "g",
    agents: Sequence[str] = ("builder", "other"),
    todo_count: int = 1,
    at: datetime = T0,
    **quota: float,
) -> FileStore:
    """Initialise `root` with one goal (quota as given), `agents` without capabilities, and
    todos `t1`..`tN` titled "Todo N"."""
    root.mkdir(parents=True, exist_ok=True)
    store = FileStore(root)
    store.init()
    goals.add_goal(store, goal, "Objective", at, **quota)
    for agent in agents:
        goals.register_agent(store, agent, [], at)
    for n in range(todo_count):
        todos.add_todo(store, goal, f"Todo {n + 1}", at)
    return store


def demo_project(root: Path) -> Path:
    """Through the CLI: `init`, goal `demo`, agent `builder` (python), todo "Write parser" (python)."""
    for args in (
        ["init"],
        ["goal", "add", "-g", "demo", "-o", "Ship"],
        ["agent", "register", "-a", "builder", "-c", "python"],
        ["todo", "add", "-g", "demo", "--title", "Write parser", "-c", "python"],
    ):
        assert run_loopx(*args, root=root).exit_code == 0, args
    return root


def settle_turn(
    store: FileStore,
    agent: str,
    todo_id: str,
    *,
    goal: str = "g",
    at: datetime = T0,
    steps: Sequence[StepKind] = SETTLE,
    slots: int | None = 1,
) -> TurnJournal:
    """Begin `agent`'s turn on `todo_id` and run `steps` of its settlement (validation passes)."""
    journal, _ = begin_turn(store, goal, agent, at, todo_id=todo_id)
    ctx = TurnContext(
        store, goal, agent, journal.turn_key, lambda: at, summary="s", validation_passed=True, slots=slots
    )
    if steps:
        record_host_phases(ctx, {"adapter": "test", "status": "succeeded"})  # as every host's writeback does
        settle_steps(ctx, list(steps), adapter="test")
    return store.read_journal(goal, journal.turn_key)


def lived_in_project(root: Path) -> str:
    """Goal g at `root`: a settled turn on t1 (completed), a scheduler ack, and builder's open
    turn on t2, whose key is returned: every kind of file a goal keeps."""
    from loopx_core.ops import scheduler

    store = build_project(root, agents=("builder",), todo_count=2)
    settle_turn(store, "builder", "t1", slots=None)
    todos.complete_todo(store, "g", "t1", T0, agent_id="builder")
    scheduler.ack(store, "g", "builder", T0, rrule="FREQ=MINUTELY;INTERVAL=10", fingerprint="f")
    return settle_turn(store, "builder", "t2", steps=()).turn_key


def tree(root: Path) -> dict[str, bytes | None]:
    """Every file (bytes), folder (None) and symbolic link (`-> target`) under root, by relative path."""

    def content(p: Path) -> bytes | None:
        if p.is_symlink():
            return b"-> " + os.fsencode(os.readlink(p))
        return None if p.is_dir() else p.read_bytes()

    return {str(p.relative_to(root)): content(p) for p in sorted(root.rglob("*"))}


def distribution(site: Path, name: str, entry_points: str | bytes | None = None) -> Path:
    """`NAME-1.0.dist-info` in `site`, as pip installs a distribution: its METADATA, and its
    `entry_points.txt` when given (bytes as they are: a test may hand the scan any bytes)."""
    info = site / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    if isinstance(entry_points, bytes):
        (info / "entry_points.txt").write_bytes(entry_points)
    elif entry_points is not None:
        (info / "entry_points.txt").write_text(entry_points)
    return info


FACADE_GOALS = ("demo", "g", "g-1", "g1", "g2", "parser")
FACADE_AGENTS = ("builder", "a", "a.b", "a1", "a2", "reviewer")


def facade_subjects(store: FileStore, at: datetime = T0) -> None:
    """The goals and agents facade tests install for (`--install` refuses ones the project lacks)."""
    have = store.read_registry()
    for goal_id in FACADE_GOALS:
        if goal_id not in have.goals:
            goals.add_goal(store, goal_id, "Objective", at)
    for agent_id in FACADE_AGENTS:
        if agent_id not in have.agents:
            goals.register_agent(store, agent_id, [], at)


def run_once_words(
    host: str = "true", validation: str = "true", *, agent: str = "builder", goal: str = "g"
) -> tuple[str, ...]:
    """The words of `loopx turn run-once` for `build_project`'s goal and agent (after `loopx`)."""
    return (
        "turn",
        "run-once",
        "-g",
        goal,
        "-a",
        agent,
        "--host-command",
        host,
        "--validation-command",
        validation,
    )
