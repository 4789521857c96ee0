"""A goal's terminal closeout tells the owner at once (goal_done), once, even when the closeout
is replayed after a crash and later ticks look at the done goal again."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from loopx_core.clock import iso
from loopx_core.faults import FAULT_EXIT_CODE
from tests.builders import build_project
from tests.conftest import T0, run_loopx


def _run(root: Path, minutes: float, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = run_loopx(*args, root=root, now=iso(T0 + timedelta(minutes=minutes)), env=env)
    return result.exit_code, result.stdout


@pytest.mark.parametrize("crash", [None, "before_receipt:terminal_closeout", "after:terminal_closeout"])
def test_the_closeout_queues_goal_done_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, crash: str | None
) -> None:
    monkeypatch.setenv("LOOPX_NOTIFY_FLUSH", "off")
    build_project(tmp_path, agents=("builder",))
    assert _run(tmp_path, 0, "notify", "add", "file://notices.jsonl")[0] == 0
    code, out = _run(tmp_path, 0, "turn", "begin", "-g", "g", "-a", "builder", "-t", "t1")
    assert code == 0, out
    key = json.loads(out)["turn_key"]
    done = ["--summary", "s", "--validation-status", "passed"]
    assert _run(tmp_path, 1, "writeback", "-g", "g", "-a", "builder", "-k", key, *done)[0] == 0
    assert _run(tmp_path, 2, "quota", "spend", "-g", "g", "-a", "builder", "-k", key)[0] == 0
    close = [
        "todo",
        "complete",
        "-g",
        "g",
        "-t",
        "t1",
        "-a",
        "builder",
        "--evidence",
        "e",
        "--no-follow-up",
        "-k",
        key,
    ]
    if crash:
        assert _run(tmp_path, 3, *close, env={"LOOPX_FAULT": crash})[0] == FAULT_EXIT_CODE
    assert _run(tmp_path, 4, *close)[0] == 0
    for minute in (5, 60, 600):  # later ticks see the done goal
        _run(tmp_path, minute, "quota", "should-run", "-g", "g", "-a", "builder")
    assert _run(tmp_path, 601, "notify", "flush")[0] == 0
    lines = [json.loads(x) for x in (tmp_path / "notices.jsonl").read_text().splitlines()]
    assert [n["kind"] for n in lines] == ["goal_done"], lines
    assert lines[0]["at"][:16] in ("2026-11-29T12:03", "2026-11-29T12:04")  # at the closeout, not a tick
