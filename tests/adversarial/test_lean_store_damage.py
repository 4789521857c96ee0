"""Class: a damaged file meets the settlement store exactly as it meets the pydantic file store.

One settled project; a generated damage to one of its files (cut short, a byte changed, a
value of another type or range, another schema version, an extra key, non-JSON); then one
store operation through `FileStore` and through `LeanSettleStore` on two copies. The answer
(the value read, or the error's class and line) and every file afterwards are the same:
a refusal writes nothing the other store would not.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.errors import LoopxError
from loopx_core.models import lean
from loopx_core.ops import todos
from loopx_core.store.files import FileStore
from loopx_core.store.lean_store import LeanSettleStore
from tests.builders import build_project, settle_turn, tree
from tests.conftest import T0

FILES = {
    "registry": ".loopx/registry.json",
    "state": ".loopx/goals/g/state.json",
    "journal": "JOURNAL",
    "ledger": ".loopx/goals/g/events.jsonl",
    "history": ".loopx/goals/g/runs/index.jsonl",
    "receipts": ".loopx/goals/g/receipts.json",
    "scheduler": ".loopx/goals/g/scheduler.json",
}
READERS = {
    "registry": ("read registry", "update registry", "claim"),
    "state": ("read goal", "update goal", "claim"),
    "journal": ("read journal", "rewrite journal"),
    "ledger": ("append event", "window", "whole ledger", "spend receipt"),
    "history": ("history", "run indexed"),
    "receipts": ("spend receipt", "run indexed", "append event"),
    "scheduler": ("scheduler",),
}
"""The operations that read each file."""
ODD = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=4),
    st.just([]),
    st.just({}),
)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A project with a settled turn, a spend, a history line, receipts and scheduler state."""
    root = tmp_path_factory.mktemp("template")
    store = build_project(root, agents=("a", "b"), todo_count=2)
    journal = settle_turn(store, "a", "t1")
    todos.complete_todo(store, "g", "t1", T0, agent_id="a", evidence=["ok"])
    (root / ".loopx/goals/g/scheduler.json").write_text(
        '{\n  "schema_version": 1,\n  "goal_id": "g",\n  "agents": {}\n}\n'
    )
    return root, journal.turn_key


def _outcome(call: Callable[[], Any]) -> str:
    try:
        value = call()
    except LoopxError as error:
        return f"{type(error).__name__}: {error.message}"
    if isinstance(value, list):
        value = [_plain(v) for v in value]
    return json.dumps(_plain(value), default=str, sort_keys=True)


def _plain(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump()
    if isinstance(value, lean._Lean):
        return lean.dump(value)
    return value


def _operations(key: str) -> dict[str, Callable[[Any], Any]]:
    at = T0 + timedelta(hours=1)

    def append(store: Any) -> Any:
        return store.append_event(
            "g",
            lambda seq, last: store.models.LedgerEvent(
                schema_version=1,
                event_id=f"ev-{seq}",
                seq=seq,
                kind="spend",
                at=at,
                goal_id="g",
                agent_id="a",
                slots=1,
            ),
        )

    def rewrite_journal(store: Any) -> None:
        with store.goal_lock("g"):
            journal = store.read_journal("g", key)
            journal.status = "committed"
            store.write_journal(journal)

    return {
        "read registry": lambda s: s.read_registry(),
        "update registry": lambda s: s.update_registry(lambda r: sorted(r.goals)),
        "read goal": lambda s: s.read_goal("g"),
        "update goal": lambda s: s.update_goal("g", lambda g: g.evidence.append("x")),
        "read journal": lambda s: s.read_journal("g", key),
        "rewrite journal": rewrite_journal,
        "append event": append,
        "window": lambda s: s.ledger_since("g", T0 - timedelta(days=1)),
        "whole ledger": lambda s: s.ledger_all("g"),
        "spend receipt": lambda s: s.spend_receipt("g", "ti-none"),
        "run indexed": lambda s: s.run_indexed("g", "run-none"),
        "history": lambda s: s.read_history("g"),
        "scheduler": lambda s: s.read_scheduler("g"),
        "claim": lambda s: todos.claim_todo(s, "g", "t2", "b", at),
    }  # fmt: skip


@st.composite
def damages(draw: st.DrawFn, data: bytes) -> bytes:
    """`data` damaged one way (for a JSONL file: its last line)."""
    lines = data.split(b"\n")
    last = len(lines) - 2 if data.endswith(b"\n") and len(lines) > 1 else len(lines) - 1
    target = lines[last]
    how = draw(st.sampled_from(["cut", "byte", "field", "version", "extra", "drop", "value"]))
    if how == "cut":
        target = target[: draw(st.integers(0, max(len(target) - 1, 0)))]
    elif how == "byte" and target:
        at = draw(st.integers(0, len(target) - 1))
        target = target[:at] + bytes([draw(st.integers(0, 255))]) + target[at + 1 :]
    elif how == "value":
        target = json.dumps(draw(ODD)).encode()
    else:
        try:
            doc = json.loads(target)
        except ValueError:
            doc = None
        if isinstance(doc, dict) and doc:
            name = draw(st.sampled_from(sorted(doc)))
            if how == "field":
                doc[name] = draw(ODD)
            elif how == "version":
                doc["schema_version"] = draw(st.sampled_from([2, 0, "1", 1.0, None, True]))
            elif how == "extra":
                doc["unexpected"] = draw(ODD)
            else:
                del doc[name]
            indent = 2 if b"\n" in data.strip() and len(lines) < 3 else None
            target = json.dumps(doc, indent=indent, ensure_ascii=False).encode()
    lines[last] = target
    return b"\n".join(lines)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_damaged_file_meets_both_stores_alike(
    template: tuple[Path, str], tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    source, key = template
    which = data.draw(st.sampled_from(sorted(FILES)))
    relative = FILES[which] if which != "journal" else f".loopx/goals/g/turns/{key[7:]}.json"
    damaged = data.draw(damages((source / relative).read_bytes()))
    name = data.draw(st.sampled_from(READERS[which]))
    operation = _operations(key)[name]
    answers, trees = {}, {}
    base = tmp_path_factory.mktemp("damage")
    for cls in (FileStore, LeanSettleStore):
        root = base / cls.__name__
        shutil.copytree(source, root)
        (root / relative).write_bytes(damaged)
        answers[cls.__name__] = _outcome(lambda r=root, c=cls: operation(c(r)))
        trees[cls.__name__] = {k: v for k, v in tree(root).items() if "locks" not in k}
    assert answers["FileStore"] == answers["LeanSettleStore"], (which, name, damaged)
    assert trees["FileStore"] == trees["LeanSettleStore"], (which, name, damaged)
