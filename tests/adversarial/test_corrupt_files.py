"""Class: every file LoopX reads answers damage with a documented code, never a crash.

Each state file (registry, goal state, ledger, run history, receipt index, turn journal,
scheduler state) is damaged in each way (truncated, garbage, a directory in its place, the
wrong JSON type, nesting 200,000 deep, a newer schema), then the commands of a loop run
against it. Each answers with a documented exit code other than "internal error", one
error line without a traceback or an absolute path, and a refusal changes no file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loopx_core.errors import EXIT_CODES, ExitCode
from loopx_core.ops import scheduler, todos
from tests.builders import build_project, settle_turn
from tests.conftest import T0, Cli

DOCUMENTED = {int(code) for code in EXIT_CODES} - {int(ExitCode.INTERNAL)}
DEEP = b"[" * 200_000 + b"]" * 200_000


def _build(root: Path) -> str:
    """Goal g with two todos: a settled turn of builder on t1, an open turn on t2; returns its key."""
    store = build_project(root, agents=("builder",), todo_count=2)
    settle_turn(store, "builder", "t1", slots=None)
    todos.complete_todo(store, "g", "t1", T0, agent_id="builder")
    scheduler.ack(store, "g", "builder", T0, rrule="FREQ=MINUTELY;INTERVAL=10", fingerprint="f")
    return settle_turn(store, "builder", "t2", steps=()).turn_key


FILES = {
    "registry": lambda root, key: root / ".loopx/registry.json",
    "state": lambda root, key: root / ".loopx/goals/g/state.json",
    "ledger": lambda root, key: root / ".loopx/goals/g/events.jsonl",
    "runs-index": lambda root, key: root / ".loopx/goals/g/runs/index.jsonl",
    "receipts": lambda root, key: root / ".loopx/goals/g/receipts.json",
    "journal": lambda root, key: root / f".loopx/goals/g/turns/{key[7:]}.json",
    "scheduler": lambda root, key: root / ".loopx/goals/g/scheduler.json",
}


def _damage(path: Path, how: str) -> None:
    good = path.read_bytes()
    if how == "directory":
        path.unlink()
        path.mkdir()
        return
    jsonl = path.suffix == ".jsonl"
    first = json.loads(good.splitlines()[0] if jsonl else good)
    damaged = {
        "truncated": good[: len(good) // 2 + 1],
        "garbage": good + b"\x00\xff not json\n" if jsonl else b"\x00\xff not json",
        "wrong-type": b"[1, 2]\n" if jsonl else b'"a string"',
        "deep": good + DEEP + b"\n" if jsonl else DEEP,
        "newer-schema": json.dumps({**first, "schema_version": 99}).encode() + (b"\n" if jsonl else b""),
        "identity-keys-missing": None,
    }[how]
    if how == "identity-keys-missing":
        first["identity"] = {"goal_id": "g"}
        damaged = json.dumps(first).encode()
    path.write_bytes(damaged)  # type: ignore[arg-type]


COMMANDS = {
    "should-run": ["quota", "should-run", "-g", "g", "-a", "builder"],
    "status": ["status", "--format", "json"],
    "quota-status": ["quota", "status", "-g", "g"],
    "todo-list": ["todo", "list", "-g", "g"],
    "writeback": ["writeback", "-g", "g", "-a", "builder", "-k", "{key}", "--summary", "s", "--validation-status", "passed"],
    "spend": ["quota", "spend", "-g", "g", "-a", "builder", "-k", "{key}"],
    "manual-spend": ["quota", "spend", "-g", "g", "-a", "builder", "--manual", "--slots", "1", "--turn-instance-id", "x"],
    "inspect": ["turn", "inspect-journal", "-g", "g", "-a", "builder", "-k", "{key}"],
    "cancel": ["turn", "cancel", "-g", "g", "-a", "builder", "-k", "{key}"],
    "begin": ["turn", "begin", "-g", "g", "-a", "builder", "-t", "t2"],
}  # fmt: skip


def _snapshot(root: Path) -> dict[str, bytes | None]:
    files = {}
    for path in sorted((root / ".loopx").rglob("*")):
        if "locks" in path.parts:
            continue
        files[str(path.relative_to(root))] = None if path.is_dir() else path.read_bytes()
    return files


@pytest.mark.parametrize("how", ["truncated", "garbage", "directory", "wrong-type", "deep", "newer-schema"])
@pytest.mark.parametrize("which", sorted(FILES))
def test_every_command_answers_a_damaged_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, which: str, how: str
) -> None:
    root = tmp_path / "p"
    root.mkdir()
    key = _build(root)
    _damage(FILES[which](root, key), how)
    cli = Cli(root, monkeypatch)
    for name, template in COMMANDS.items():
        before = _snapshot(root)
        args = [a.replace("{key}", key) for a in template]
        result = cli(*args, "--format", "json") if "--format" not in args else cli(*args)
        where = f"{name} with a {how} {which}"
        assert result.exit_code in DOCUMENTED | {0}, f"{where}: {result.exit_code} {result.stderr}"
        assert "Traceback" not in result.stderr + result.stdout, where
        assert str(tmp_path) not in result.stderr + result.stdout, where
        answer = json.loads(result.stdout)  # JSON was asked: JSON it is, answer or error object
        if name == "should-run" and result.exit_code == int(ExitCode.STATE_INVALID):
            assert answer["quota"]["state"] == "blocked_health", where  # a packet is an answer
        elif result.exit_code != 0:
            assert result.stderr.count("\n") == 1, f"{where}: {result.stderr}"
        if result.exit_code != 0:
            assert _snapshot(root) == before, f"{where} changed files"


def test_a_garbage_line_in_the_run_history_refuses_the_writeback_until_restored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The append-only rule (docs/state.md): nothing is appended after a line LoopX cannot read."""
    key = _build(tmp_path)
    index = tmp_path / ".loopx/goals/g/runs/index.jsonl"
    good = index.read_bytes()
    index.write_bytes(good + b"{garbage\n")
    cli = Cli(tmp_path, monkeypatch)
    refused = cli(*[a.replace("{key}", key) for a in COMMANDS["writeback"]])
    assert refused.exit_code == int(ExitCode.STATE_INVALID), refused.stderr
    assert index.read_bytes() == good + b"{garbage\n"
    index.write_bytes(good)  # restored from a backup
    assert cli(*[a.replace("{key}", key) for a in COMMANDS["writeback"]]).exit_code == 0
    assert cli(*[a.replace("{key}", key) for a in COMMANDS["spend"]]).exit_code == 0
    assert len(index.read_text().splitlines()) == 2  # the settled run, this run


def test_a_journal_identity_with_missing_keys_is_blocked_health_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = _build(tmp_path)
    _damage(FILES["journal"](tmp_path, key), "identity-keys-missing")
    result = Cli(tmp_path, monkeypatch)(*COMMANDS["should-run"])
    assert result.exit_code == int(ExitCode.STATE_INVALID), result.stderr
    packet = json.loads(result.stdout)
    assert packet["quota"]["state"] == "blocked_health" and packet["should_run"] is False
