"""Real processes racing on one store: one claim wins, no spend is lost."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.conftest import LOOPX_BIN, T0_ISO, run_loopx

RACERS = 12


def _setup(root: Path) -> None:
    for args in (
        ["init"],
        ["goal", "add", "-g", "race", "-o", "Race"],
        ["todo", "add", "-g", "race", "--title", "Contested"],
    ):
        assert run_loopx(*args, root=root).exit_code == 0
    for i in range(RACERS):
        assert run_loopx("agent", "register", "-a", f"agent-{i}", root=root).exit_code == 0


def _race(root: Path, commands: list[list[str]]) -> list[subprocess.CompletedProcess[str]]:
    env = {**os.environ, "LOOPX_NOW": T0_ISO}
    procs = [
        subprocess.Popen(
            [str(LOOPX_BIN), "--root", str(root), *cmd],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for cmd in commands
    ]
    results = []
    for cmd, proc in zip(commands, procs, strict=True):
        out, err = proc.communicate(timeout=120)
        results.append(subprocess.CompletedProcess(cmd, proc.returncode, out, err))
    return results


def test_exactly_one_claim_wins(tmp_path: Path) -> None:
    _setup(tmp_path)
    results = _race(
        tmp_path, [["todo", "claim", "-g", "race", "-t", "t1", "-a", f"agent-{i}"] for i in range(RACERS)]
    )
    codes = sorted(r.returncode for r in results)
    assert codes == [0] + [5] * (RACERS - 1), [r.stderr for r in results]
    winner = next(r for r in results if r.returncode == 0)
    state = json.loads((tmp_path / ".loopx/goals/race/state.json").read_text())
    assert state["todos"][0]["claimed_by"] == json.loads(winner.stdout)["claimed_by"]
    assert state["version"] == 2  # one add, one claim: losers wrote nothing


def test_no_spend_is_lost(tmp_path: Path) -> None:
    _setup(tmp_path)
    results = _race(
        tmp_path,
        [
            [
                "quota",
                "spend",
                "-g",
                "race",
                "-a",
                f"agent-{i}",
                "--manual",
                "--slots",
                str(i + 1),
                "--turn-instance-id",
                f"ti-{i}",
            ]
            for i in range(RACERS)
        ],
    )
    assert all(r.returncode == 0 for r in results), [r.stderr for r in results]
    lines = (tmp_path / ".loopx/goals/race/events.jsonl").read_text().splitlines()
    events = [json.loads(line) for line in lines]
    assert sorted(e["seq"] for e in events) == list(range(1, RACERS + 1))
    assert sorted(e["turn_instance_id"] for e in events) == sorted(f"ti-{i}" for i in range(RACERS))
    status = json.loads(run_loopx("quota", "status", "-g", "race", root=tmp_path).stdout)
    assert status["spent_slots"] == sum(range(1, RACERS + 1))


def test_same_turn_spent_concurrently_is_charged_once(tmp_path: Path) -> None:
    _setup(tmp_path)
    results = _race(
        tmp_path,
        [
            [
                "quota",
                "spend",
                "-g",
                "race",
                "-a",
                "agent-0",
                "--manual",
                "--slots",
                "2",
                "--turn-instance-id",
                "ti-x",
            ]
        ]
        * 8,
    )
    assert all(r.returncode == 0 for r in results)
    assert sum(not json.loads(r.stdout)["replayed"] for r in results) == 1
    assert len((tmp_path / ".loopx/goals/race/events.jsonl").read_text().splitlines()) == 1
