"""Every file kind refuses a newer or unknown schema: exit 8, every byte of state unchanged.

The kinds are found, not listed by hand: every pydantic model in LoopX with a
`schema_version` field is a file kind (or a line kind) and must have a case here, so a
file kind added later fails `test_every_schema_versioned_model_has_a_case` until it joins.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from pydantic import BaseModel

import loopx_core
import loopx_installer
from loopx_core.ops import scheduler, todos
from loopx_installer.paths import MANIFEST
from tests.builders import build_project, settle_turn
from tests.conftest import T0, run_loopx


@dataclass(frozen=True)
class Kind:
    """Where a file kind lives in a project, and a command that must read it."""

    path: Callable[[Path, str], Path]
    command: Callable[[str], list[str]]
    lines: bool = False


KINDS: dict[str, Kind] = {
    "Registry": Kind(lambda r, k: r / ".loopx/registry.json", lambda k: ["status", "--format", "json"]),
    "GoalState": Kind(lambda r, k: r / ".loopx/goals/g/state.json", lambda k: ["todo", "list", "-g", "g"]),
    "LedgerEvent": Kind(
        lambda r, k: r / ".loopx/goals/g/events.jsonl", lambda k: ["quota", "status", "-g", "g"], lines=True
    ),
    "TurnJournal": Kind(
        lambda r, k: r / f".loopx/goals/g/turns/{k[7:]}.json",
        lambda k: ["turn", "inspect-journal", "-g", "g", "-a", "builder", "-k", k],
    ),
    "RunIndexEntry": Kind(
        lambda r, k: r / ".loopx/goals/g/runs/index.jsonl",
        lambda k: ["writeback", "-g", "g", "-a", "builder", "-k", k, "--summary", "s", "--validation-status", "passed"],
        lines=True,
    ),
    "ReceiptIndex": Kind(
        lambda r, k: r / ".loopx/goals/g/receipts.json",
        lambda k: ["quota", "spend", "-g", "g", "-a", "builder", "--manual", "--slots", "1", "--turn-instance-id", "x"],
    ),
    "SchedulerState": Kind(
        lambda r, k: r / ".loopx/goals/g/scheduler.json",
        lambda k: ["quota", "scheduler-ack", "-g", "g", "-a", "builder", "--rrule", "FREQ=HOURLY"],
    ),
    "StoreConfig": Kind(lambda r, k: r / ".loopx/store.json", lambda k: ["status", "--format", "json"]),
    "SinkFile": Kind(lambda r, k: r / ".loopx/notices/sinks.json", lambda k: ["notify", "list"]),
    "ManifestModel": Kind(
        lambda r, k: r / MANIFEST,
        lambda k: ["workflow-skills", "--check", "--surface", "codex-app", "--target", "."],
    ),
}  # fmt: skip
LEGACY = {"_V1"}
"""Older schemas kept only to read (and migrate) files written by an earlier release."""
REPORTED = {"OutboxRecord"}
"""Kinds a command never refuses but leaves unchanged and `loopx doctor` reports (see below)."""


def _versioned_models() -> set[str]:
    found: set[str] = set()
    for package in (loopx_core, loopx_installer):
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if info.name.endswith(("pytest_plugin", "mcp.server", "__main__")):
                continue
            importlib.import_module(info.name)
    stack = list(BaseModel.__subclasses__())
    while stack:
        model = stack.pop()
        stack.extend(model.__subclasses__())
        if (
            model.__module__.startswith(("loopx_core", "loopx_installer"))
            and "schema_version" in model.model_fields
        ):
            found.add(model.__name__)
    return found - LEGACY - REPORTED


def test_every_schema_versioned_model_has_a_case() -> None:
    assert _versioned_models() == set(KINDS)


def _project(root: Path) -> str:
    """A goal with a settled turn, a scheduler entry, an installed facade, and an open turn; its key."""
    store = build_project(root, agents=("builder",), todo_count=2)
    settle_turn(store, "builder", "t1", slots=None)
    todos.complete_todo(store, "g", "t1", T0, agent_id="builder")
    scheduler.ack(store, "g", "builder", T0, rrule="FREQ=MINUTELY;INTERVAL=10", fingerprint="f")
    (root / ".loopx/store.json").write_text('{"schema_version": 1, "store": "files"}\n')
    assert run_loopx("notify", "add", "file://notices.jsonl", root=root).exit_code == 0
    installed = run_loopx(
        "workflow-skills", "--install", "--surface", "codex-app", "--target", str(root), root=root
    )
    assert installed.exit_code == 0, installed.stderr
    return settle_turn(store, "builder", "t2", steps=()).turn_key


def _state(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "locks" not in p.parts
    }


@pytest.mark.parametrize("version", ["next", 99, 0, "as-text", None])
@pytest.mark.parametrize("name", sorted(KINDS))
def test_another_schema_version_is_refused_with_exit_8_and_nothing_changes(
    tmp_path: Path, name: str, version: object
) -> None:
    kind = KINDS[name]
    key = _project(tmp_path)
    path = kind.path(tmp_path, key)
    text = path.read_text()
    first = json.loads(text.splitlines()[-1] if kind.lines else text)
    current = first["schema_version"]
    if version is None:
        del first["schema_version"]
    else:
        first["schema_version"] = {"next": current + 1, "as-text": str(current)}.get(version, version)  # type: ignore[call-overload]
    line = json.dumps(first)
    path.write_text(text + line + "\n" if kind.lines else line)  # a newer loopx appends its lines
    before = _state(tmp_path)
    result = run_loopx(*kind.command(key), root=tmp_path, cwd=tmp_path)
    assert result.exit_code == 8, f"{name}: {result.exit_code} {result.stderr}"
    assert result.stderr.startswith("loopx: error: ") and result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr and str(tmp_path) not in result.stderr
    assert _state(tmp_path) == before


def test_an_outbox_record_of_another_schema_is_left_unchanged_and_reported(tmp_path: Path) -> None:
    """A queued notice written by another loopx is never delivered or rewritten by this one."""
    _project(tmp_path)
    assert run_loopx("gate", "open", "-g", "g", "--title", "Approve", root=tmp_path).exit_code == 0
    [record] = sorted((tmp_path / ".loopx/notices/events").glob("*.json"))
    data = json.loads(record.read_text())
    record.write_text(json.dumps({**data, "schema_version": 2}))
    before = record.read_bytes()
    assert run_loopx("notify", "flush", root=tmp_path).exit_code == 0
    assert record.read_bytes() == before
    sink = tmp_path / "notices.jsonl"
    assert not sink.exists() or "Approve" not in sink.read_text()
    doctor = json.loads(run_loopx("doctor", "--check", "notices", "--format", "json", root=tmp_path).stdout)
    assert "notice_record_invalid" in {f["code"] for f in doctor["findings"]}
