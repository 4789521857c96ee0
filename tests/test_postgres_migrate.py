"""`loopx store migrate`: files -> PostgreSQL -> files gives the same files, byte for byte.

Compared: every file the store owns under `.loopx/` (registry, goal states, ledgers,
journals, run records and history, scheduler state). Not compared, as docs/team.md says:
the file store's derived receipt index (`receipts.json`, rebuilt on first use), lock files,
and the machine's own `.loopx/store.json`. The copy is idempotent, verified by counts and
checksum, refuses a non-empty target without --force, and never changes the source.
"""

from __future__ import annotations

import json
import time
from datetime import timedelta
from pathlib import Path

import pytest

from loopx_core.models.constants import SCHEMA_VERSION
from loopx_core.models.records import LedgerEvent
from loopx_core.ops import goals, todos
from loopx_core.store.choice import config_path, open_target
from loopx_core.store.files import FileStore
from loopx_core.store.migrate import migrate, read
from loopx_core.store.postgres import PostgresStore
from loopx_core.store.snapshot import event_line
from tests.conftest import T0, T0_ISO, run_loopx
from tests.pg import Cluster, cluster_fixture  # noqa: F401  (the session fixture pg_cluster)

DERIVED = ("receipts.json", "store.json")


def owned_files(root: Path) -> dict[str, bytes]:
    """Every file of the store's state under `root/.loopx`, by relative path."""
    base = root / ".loopx"
    return {
        str(p.relative_to(base)): p.read_bytes()
        for p in sorted(base.rglob("*"))
        if p.is_file() and p.name not in DERIVED and not p.name.endswith(".prev") and "locks" not in p.parts
    }


def demo_project(root: Path) -> None:
    """The demo's story through the real CLI: goal, agents, todos, turns by hand and driven, gate, void, scheduler."""

    def loopx(*args: str, at: str = T0_ISO, ok: tuple[int, ...] = (0,)) -> str:
        result = run_loopx(*args, root=root, now=at)
        assert result.exit_code in ok, (args, result.stderr)
        return result.stdout

    root.mkdir(parents=True)
    loopx("init")
    loopx("goal", "add", "-g", "parser", "-o", "Ship a tested parser", "--compute", "0.5")
    loopx("agent", "register", "-a", "builder", "-c", "python", "-c", "shell")
    loopx("agent", "register", "-a", "reviewer", "-c", "review")
    loopx(
        "todo",
        "add",
        "-g",
        "parser",
        "--title",
        "Deploy",
        "-p",
        "0",
        "-c",
        "deploy",
        "--exclude-agent",
        "builder",
    )
    loopx("todo", "add", "-g", "parser", "--title", "Write the tokenizer", "-p", "1", "-c", "python")
    loopx("todo", "add", "-g", "parser", "--title", "Write the grammar", "-p", "2", "-c", "python")
    packet = json.loads(loopx("quota", "should-run", "-g", "parser", "-a", "builder"))
    key = packet["settlement_plan"]["turn_key"]
    instance = packet["settlement_plan"]["identity"]["turn_instance_id"]
    loopx("turn", "begin", "-g", "parser", "-a", "builder", "-t", "t2", "--turn-instance-id", instance)
    loopx(
        "writeback",
        "-g",
        "parser",
        "-a",
        "builder",
        "-k",
        key,
        "-s",
        "Tokenizer",
        "--validation-status",
        "passed",
        "-e",
        "pytest: 12 passed",
        "--changed-file",
        "parser/tokenizer.py",
        at="2026-11-29T12:07:00Z",
    )
    loopx("quota", "spend", "-g", "parser", "-a", "builder", "-k", key, at="2026-11-29T12:07:00Z")
    loopx(
        "todo",
        "complete",
        "-g",
        "parser",
        "-t",
        "t2",
        "-a",
        "builder",
        "-e",
        "tests pass",
        at="2026-11-29T12:08:00Z",
    )
    loopx(
        "turn",
        "run-once",
        "-g",
        "parser",
        "-a",
        "builder",
        "--host-command",
        "true",
        "--validation-command",
        "true",
        at="2026-11-29T12:10:00Z",
    )
    loopx(
        "quota",
        "spend",
        "-g",
        "parser",
        "-a",
        "reviewer",
        "--manual",
        "--slots",
        "3",
        at="2026-11-29T12:11:00Z",
    )
    loopx(
        "quota",
        "void",
        "-g",
        "parser",
        "--event-id",
        "ev-3",
        "--reason",
        "mistake",
        at="2026-11-29T12:12:00Z",
    )
    loopx(
        "gate",
        "open",
        "-g",
        "parser",
        "--gate-id",
        "staging",
        "--title",
        "Approve staging",
        at="2026-11-29T12:13:00Z",
    )
    loopx(
        "quota",
        "scheduler-ack",
        "-g",
        "parser",
        "-a",
        "builder",
        "--rrule",
        "FREQ=MINUTELY;INTERVAL=10",
        at="2026-11-29T12:14:00Z",
    )


def test_the_demo_project_goes_to_postgresql_and_back_byte_for_byte(
    tmp_path: Path,
    pg_cluster: Cluster,
) -> None:
    project, back = tmp_path / "project", tmp_path / "back"
    demo_project(project)
    before = owned_files(project)
    assert any(name.endswith("events.jsonl") for name in before) and any("turns/" in n for n in before)
    dsn = pg_cluster.fresh_schema()

    there = run_loopx("store", "migrate", "--to", dsn, root=project)
    assert there.exit_code == 0, there.stderr
    report = json.loads(there.stdout)
    assert report["copied"] and report["project_uses"] == "postgresql:///loopx"
    assert report["counts"]["events"] == 4 and report["counts"]["journals"] == 2
    assert "options" not in there.stdout and "/tmp" not in there.stdout  # shown redacted
    assert json.loads(config_path(project).read_text())["store"] == dsn  # the project uses it now
    packet = json.loads(
        run_loopx("quota", "should-run", "-g", "parser", "-a", "builder", root=project).stdout
    )
    assert packet["store"] == "postgresql:///loopx"

    again = run_loopx("store", "migrate", "--to", dsn, root=project, env={"LOOPX_STORE": "files"})
    assert again.exit_code == 0 and json.loads(again.stdout)["copied"] is False  # idempotent

    home = run_loopx("store", "migrate", "--to", "files", str(back), root=project)
    assert home.exit_code == 0, home.stderr
    assert owned_files(back) == before  # byte for byte
    assert owned_files(project) == before  # the source was never changed

    refused = run_loopx(
        "todo", "add", "-g", "parser", "--title", "More", root=project
    )  # the team store moves on
    assert refused.exit_code == 0
    clash = run_loopx("store", "migrate", "--to", "files", str(back), root=project)
    assert clash.exit_code == 7 and "--force" in clash.stderr
    forced = run_loopx("store", "migrate", "--to", "files", str(back), "--force", root=project)
    assert forced.exit_code == 0, forced.stderr
    assert json.loads(forced.stdout)["replaced"] is True
    assert [t.title for t in FileStore(back).read_goal("parser").todos][-1] == "More"


def big_ledger(root: Path, events: int) -> None:
    """A project whose goal has a ledger of `events` events (spends, every 10th a void)."""
    store = FileStore(root)
    root.mkdir(parents=True)
    store.init()
    goals.add_goal(store, "g", "Long-lived goal", T0)
    goals.register_agent(store, "a", [], T0)
    todos.add_todo(store, "g", "Todo", T0)
    lines = []
    for seq in range(1, events + 1):
        void = seq % 10 == 0
        event = LedgerEvent(
            schema_version=SCHEMA_VERSION,
            event_id=f"ev-{seq}",
            seq=seq,
            kind="void" if void else "spend",
            at=T0 + timedelta(seconds=seq),
            goal_id="g",
            agent_id="a",
            turn_instance_id=None if void else f"ti-{seq:08x}",
            voids_event_id=f"ev-{seq - 1}" if void else None,
            slots=0 if void else 1,
        )
        lines.append(event_line(event) + "\n")
    store.ledger_path("g").write_text("".join(lines))


@pytest.mark.slow(seconds=70)
def test_a_hundred_thousand_event_ledger_round_trips(tmp_path: Path, pg_cluster: Cluster) -> None:
    big_ledger(tmp_path / "big", 100_000)
    before = owned_files(tmp_path / "big")
    source = FileStore(tmp_path / "big")
    database = open_target(tmp_path / "big", pg_cluster.fresh_schema())
    assert isinstance(database, PostgresStore)
    try:
        started = time.perf_counter()
        there = migrate(source, database)
        back = FileStore(tmp_path / "back")
        home = migrate(database, back)
        elapsed = time.perf_counter() - started
        assert there.counts["events"] == home.counts["events"] == 100_000
        assert there.checksum == home.checksum
        assert owned_files(tmp_path / "back") == before
        spend = database.spend_receipt("g", f"ti-{1:08x}")  # receipts work in the copy
        assert spend is not None and spend.seq == 1
        assert database.void_receipt("g", "ev-99999") is not None
        print(f"100,000 events: files -> PostgreSQL -> files in {elapsed:.1f}s")
    finally:
        database.close()


def test_a_damaged_source_is_refused_and_nothing_is_written(tmp_path: Path, pg_cluster: Cluster) -> None:
    big_ledger(tmp_path / "p", 3)
    with FileStore(tmp_path / "p").ledger_path("g").open("a") as handle:
        handle.write('{"schema_version": 1, "seq": \n')  # a damaged line
    dsn = pg_cluster.fresh_schema()
    result = run_loopx("store", "migrate", "--to", dsn, root=tmp_path / "p")
    assert result.exit_code == 4 and "ledger" in result.stderr
    assert not config_path(tmp_path / "p").exists()
    database = open_target(tmp_path / "p", dsn)
    try:
        assert read(database).is_empty
    finally:
        database.close()  # type: ignore[attr-defined]


def test_a_credential_in_the_target_is_refused_before_anything_moves(tmp_path: Path) -> None:
    big_ledger(tmp_path / "p", 1)
    result = run_loopx(
        "store", "migrate", "--to", "postgresql://loopx:hunter2@db.example/loopx", root=tmp_path / "p"
    )
    assert result.exit_code == 2 and "hunter2" not in result.stderr + result.stdout
    assert not config_path(tmp_path / "p").exists()


@pytest.mark.slow
def test_init_joins_or_refuses_and_the_project_can_move_back_home(
    tmp_path: Path, pg_cluster: Cluster
) -> None:
    project = tmp_path / "project"
    demo_project(project)
    before = owned_files(project)
    dsn, other = pg_cluster.fresh_schema(), pg_cluster.fresh_schema()
    hidden = run_loopx("init", "--store", dsn, root=project)  # would hide the state in files
    assert hidden.exit_code == 7 and "store migrate" in hidden.stderr
    assert run_loopx("store", "migrate", "--to", dsn, root=project).exit_code == 0
    assert run_loopx("init", "--store", dsn, root=project).exit_code == 0  # the same store: a no-op
    switched = run_loopx("init", "--store", other, root=project)
    assert switched.exit_code == 7 and "already uses" in switched.stderr
    assert run_loopx("init", "--store", "files", root=project).exit_code == 7
    run_loopx("todo", "add", "-g", "parser", "--title", "Done on the team store", root=project)
    clash = run_loopx("store", "migrate", "--to", "files", ".", root=project, cwd=project)
    assert clash.exit_code == 7  # the old files are still there, and differ
    home = run_loopx("store", "migrate", "--to", "files", ".", "--force", root=project, cwd=project)
    assert home.exit_code == 0, home.stderr
    assert json.loads(home.stdout)["project_uses"] == "files" and not config_path(project).exists()
    after = owned_files(project)
    assert (
        after != before and FileStore(project).read_goal("parser").todos[-1].title == "Done on the team store"
    )
    shown = run_loopx("store", "show", "-f", "json", root=project)
    assert json.loads(shown.stdout)["store"] == "files"
