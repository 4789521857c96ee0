"""What each settlement command of a turn costs at the disk: fsyncs and renames, counted, not timed.

Once its imports are paid, a settlement command's time is its durable writes: every atomic
write of the truth is a file fsync, a rename and a folder fsync (about 0.2 ms each on an idle
disk, 2-4 ms while other processes write). The receipt index is renamed but never fsynced
(derived data: store/receipts.py `load` rebuilds it however a crash leaves it), and the run
record's JSON and Markdown share one folder fsync. A turn's four commands make 27 fsyncs and
22 renames today;
this pins those budgets, so a new write (or a new fsync) on the turn's path fails here rather
than as a slower benchmark. Fewer is always allowed. Where they go, per command:
- `turn begin`: the claim (goal state), the journal, the open-turn slot (goal state);
- `writeback`: the host phases journaled with validation's receipt (one write), the lease
  renewed, the run record (JSON, Markdown: one folder fsync), its history line, the receipt
  index (renamed only), the progress tally, the journal, the lease renewed again;
- `quota spend --turn-key`: the ledger line, the receipt index (renamed only), the journal,
  the lease;
- `todo complete`: the goal state.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from loopx_core.cli.entry import main
from tests.builders import demo_project
from tests.conftest import T0_ISO

BUDGETS = {
    "turn begin": {"fsync": 6, "replace": 5},
    "writeback": {"fsync": 14, "replace": 11},
    "quota spend --turn-key": {"fsync": 5, "replace": 4},
    "todo complete": {"fsync": 2, "replace": 2},
}
"""The most fsyncs and renames each command of a turn may make (what it makes today)."""


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """`loopx ARGV` in this process (the console script's entry, as a host runs it): its JSON answer."""
    with pytest.raises(SystemExit) as done:
        main(argv)
    out = capsys.readouterr().out
    assert done.value.code == 0, out
    return json.loads(out)  # type: ignore[no-any-return]


def test_a_turn_stays_within_its_write_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = demo_project(tmp_path / "project")
    monkeypatch.setenv("LOOPX_NOW", T0_ISO)
    counts: Counter[str] = Counter()

    def counted(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            counts[name] += 1
            return real(*args, **kwargs)

        return call

    monkeypatch.setattr(os, "fsync", counted("fsync", os.fsync))
    monkeypatch.setattr(os, "replace", counted("replace", os.replace))
    who = ["--root", str(root)]
    spent: dict[str, dict[str, int]] = {}
    key = ""
    for name, argv in (
        ("turn begin", ["turn", "begin", "-g", "demo", "-a", "builder", "-t", "t1", "-f", "json"]),
        (
            "writeback",
            [
                *("writeback", "-g", "demo", "-a", "builder", "-k", "{K}", "-s", "done"),
                *("--validation-status", "passed", "-f", "json"),
            ],
        ),
        (
            "quota spend --turn-key",
            ["quota", "spend", "-g", "demo", "-a", "builder", "-k", "{K}", "-f", "json"],
        ),
        (
            "todo complete",
            ["todo", "complete", "-g", "demo", "-a", "builder", "-t", "t1", "-e", "ok", "-f", "json"],
        ),
    ):
        counts.clear()
        answer = _run([*who, *(word.replace("{K}", key) for word in argv)], capsys)
        key = key or answer["turn_key"]
        spent[name] = dict(counts)
    assert answer["status"] == "done"  # the turn did all its work: the todo is done
    assert spent["writeback"]["fsync"] > 0  # the counters saw the writes (not bypassed)
    over = {
        name: {what: (spent[name].get(what, 0), most) for what, most in budget.items()}
        for name, budget in BUDGETS.items()
        if any(spent[name].get(what, 0) > most for what, most in budget.items())
    }
    assert not over, over
