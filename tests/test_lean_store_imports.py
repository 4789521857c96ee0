"""A whole turn through the settlement store loads neither pydantic, filelock nor pathlib.

In a fresh interpreter (tests/probe.py's bare environment, no coverage): open the project's
store for settlement (its root as a string, as `roots.find_root_text` gives it), begin a turn, write it back, spend it and complete its todo through the
real settlement code, then list what is loaded. The files are the truth the pydantic store
would have written (tests/test_lean_store_bytes.py); here only the cost is pinned.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.builders import build_project
from tests.probe import NO_COVERAGE, REPO

TURN = """\
import json, sys
from datetime import datetime, timedelta, timezone
from loopx_core.kernel.algebra import StepKind
from loopx_core.ops.todos import complete_todo
from loopx_core.settlement.steps import TurnContext
from loopx_core.settlement.turns import begin_turn, record_host_phases, settle_steps
from loopx_core.store.lean_store import open_settle_store

at = datetime(2026, 11, 29, 12, 0, tzinfo=timezone.utc)
store = open_settle_store(sys.argv[1])
journal, _ = begin_turn(store, "g", "builder", at, todo_id="t1")
ctx = TurnContext(store, "g", "builder", journal.turn_key, lambda: at, summary="s", validation_passed=True, slots=1)
record_host_phases(ctx, {"adapter": "test", "status": "succeeded"})
settle_steps(ctx, [StepKind.VALIDATION, StepKind.DURABLE_WRITEBACK], adapter="test")
settle_steps(ctx, [StepKind.QUOTA_SPEND], adapter="test")
done = complete_todo(store, "g", "t1", at + timedelta(minutes=1), agent_id="builder", evidence=["ok"])
print(json.dumps([type(store).__name__, done.status, sorted(sys.modules)]))
"""
STORE_CALLS = """\
import json, sys
from datetime import datetime, timezone
from loopx_core.store.lean_store import open_settle_store

at = datetime(2026, 11, 29, 12, 0, tzinfo=timezone.utc)
store = open_settle_store(sys.argv[1])
m = store.models
key = "sha256:" + "a" * 64
identity = {"goal_id": "g", "agent_id": "builder", "todo_id": "t1", "turn_instance_id": "ti-1",
            "replan_obligation_id": None}
store.read_registry()
with store.goal_lock("g"), store.goal_lock("g"):
    store.update_goal("g", lambda s: s.evidence.append("e"))
    store.write_journal(m.TurnJournal(schema_version=1, turn_key=key, goal_id="g", agent_id="builder",
                                      identity=identity, started_at=at, updated_at=at))
    journal = store.read_journal("g", key)
    journal.record("validation", at, {"passed": True})
    store.write_journal(journal)
    store.append_event("g", lambda seq, last: m.LedgerEvent(
        schema_version=1, event_id=f"ev-{seq}", seq=seq, kind="spend", at=at, goal_id="g",
        agent_id="builder", turn_instance_id="ti-1", slots=1))
    entry = m.RunIndexEntry(schema_version=1, run_id="run-1", at="2026-11-29T12:00:00Z", agent_id="builder", turn_key=key,
                            validation="passed", summary="s")
    store.record_run("g", {"run_id": "run-1"}, "# run-1\\n", entry)
found = [store.spend_receipt("g", "ti-1").seq, store.void_receipt("g", "ev-1"), store.run_indexed("g", "run-1"),
         len(store.ledger_since("g", at)), len(store.read_scheduler("g").agents), store.read_goal("g").version]
print(json.dumps([type(store).__name__, found, sorted(sys.modules)]))
"""
BANNED = ("pydantic", "pydantic_core", "filelock", "annotated_types", "asyncio", "logging", "pathlib")


def _probe(code: str, root: Path) -> tuple[str, object, set[str]]:
    """Run `code` on the project at `root` in a fresh interpreter: its answer and the banned
    top-level packages it left loaded."""
    proc = subprocess.run(
        [sys.executable, "-c", code, str(root)],
        capture_output=True,
        text=True,
        env={**NO_COVERAGE, "PATH": "", "HOME": str(root)},
        cwd=REPO,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    kind, answer, modules = json.loads(proc.stdout)
    return kind, answer, {m.split(".")[0] for m in modules} & set(BANNED)


def test_every_store_call_of_a_turn_loads_no_pydantic_filelock_or_pathlib(tmp_path: Path) -> None:
    build_project(tmp_path, agents=("builder",))
    kind, found, loaded = _probe(STORE_CALLS, tmp_path)
    assert (kind, found) == ("LeanSettleStore", [1, None, True, 1, 0, 2])
    assert loaded == set()


def test_a_whole_turn_loads_no_pydantic_filelock_or_pathlib(tmp_path: Path) -> None:
    build_project(tmp_path, agents=("builder",))
    kind, status, loaded = _probe(TURN, tmp_path)
    assert (kind, status) == ("LeanSettleStore", "done")
    assert loaded == set()
