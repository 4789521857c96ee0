"""A simulated month (issue 12): three agents on the three host protocols, 60 todos, trouble.

Codex (heartbeat automation, cadence 12 h) drives goal alpha, Claude Code (Stop hook, cadence
24 h) goal beta, DSH (turn-boundary listener, cadence 24 h) goal gamma; Codex also has a host
on gamma, which takes over a todo whose lease expired while DSH paused mid-turn. Every host runs
only what its installed facade contains (tests/hostsim.py); the owner runs `loopx doctor` at
21:00 each day (it flushes the notices) and answers what the notices ask. Everything is read
back from the files: ledgers, journals, the quarantine and the working sink's JSON lines.
"""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.conftest import LOOPX_BIN
from tests.hostsim import TICKS
from tests.monthsim import Clock, GoalSim, Trouble

START = datetime(2026, 12, 1, tzinfo=UTC)
DAYS = 30
CADENCE = {"codex": 720, "claude": 1440, "dsh": 1440}
PROTOCOL = {"codex": "codex-app", "claude": "claude-code", "dsh": "dsh"}
GOAL_OF = {"codex": "alpha", "claude": "beta", "dsh": "gamma"}
PHASES = [
    "host_execute",
    "typed_result",
    "validation",
    "durable_writeback",
    "quota_spend",
    "terminal_closeout",
]


class Month:
    """The project, its goals' sims, the owner's commands and the timeline."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.clock = Clock(START + timedelta(hours=7))
        self.sims: dict[str, GoalSim] = {}
        self.owner_stderr: list[str] = []
        self.owner_commands = 0
        self.timeline: list[tuple[str, str, str, str]] = []
        self.ticks = 0

    @property
    def day(self) -> int:
        """Days since the month began."""
        return (self.clock.now - START).days

    def note(self, event: str, who: str, outcome: str) -> None:
        """One timeline row."""
        self.timeline.append((f"{self.day:2d} {self.clock.now:%H:%M}", event, who, outcome))

    def owner(self, *args: str, codes: frozenset[int] = frozenset({0})) -> subprocess.CompletedProcess[str]:
        """The owner's (or the owner's cron's) `loopx` command at the clock's time."""
        proc = subprocess.run(
            [str(LOOPX_BIN), "--root", str(self.root), *args],
            capture_output=True,
            text=True,
            env={**_clean_env(), "LOOPX_NOW": self.clock.iso},
            stdin=subprocess.DEVNULL,
            timeout=120,
            check=False,
        )
        self.owner_commands += 1
        self.owner_stderr.append(proc.stderr)
        assert proc.returncode in codes, (args, proc.returncode, proc.stderr)
        return proc

    def tick(self, agent: str, goal: str, trouble: Trouble | None = None) -> bool:
        """One heartbeat (Codex), Stop event (Claude) or turn boundary (DSH) of `agent` on `goal`."""
        sim = self.sims[goal]
        sim.trouble = trouble
        kw: dict[str, Any] = {"stop_after": "crash"} if trouble and trouble.fault else {}
        self.ticks += 1
        return TICKS[sim.protocol](sim, agent, **kw)

    def todos(self, goal: str) -> dict[str, str]:
        """todo -> status, from the goal's state file."""
        return self.sims[goal].todos()


def _clean_env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("LOOPX_")}


def setup(month: Month) -> None:
    """The project: three goals, three agents with cadences, two sinks (one failing), 57 todos."""
    month.root.mkdir(parents=True)
    o = month.owner
    o("init")
    for goal in ("alpha", "beta", "gamma"):
        o("goal", "add", "-g", goal, "-o", f"Ship {goal}")
    for agent, cadence in CADENCE.items():
        o("agent", "register", "-a", agent, "--cadence-minutes", str(cadence), "--host", PROTOCOL[agent])
    (month.root / "sink-dir").mkdir()
    o("notify", "add", "file://notices.jsonl")
    o("notify", "add", "file://sink-dir")  # a directory: every delivery to it fails
    for n in range(20):
        o("todo", "add", "-g", "alpha", "--title", f"Alpha {n + 1}", "-p", str(n % 3))
    for n in range(19):
        o("todo", "add", "-g", "beta", "--title", f"Beta {n + 1}", "-p", str(n % 3))
    o("todo", "add", "-g", "beta", "--title", "Profile on the GPU", "-p", "9", "-c", "gpu")
    for n in range(17):
        o("todo", "add", "-g", "gamma", "--title", f"Gamma {n + 1}", "-p", str(n % 3))
    for goal, protocol in (("alpha", "codex-app"), ("beta", "claude-code"), ("gamma", "dsh")):
        month.sims[goal] = GoalSim(month.root, protocol, goal=goal, clock=month.clock)
    for agent, goal in GOAL_OF.items():
        month.sims[goal].install(agent)
    gamma_codex = GoalSim(month.root, "codex-app", goal="gamma", clock=month.clock)
    gamma_codex.install("codex")
    month.sims["gamma-codex"] = gamma_codex


def sink_lines(month: Month) -> list[dict[str, Any]]:
    """The working sink's notices."""
    path = month.root / "notices.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_a_simulated_month(tmp_path: Path) -> None:
    month = Month(tmp_path / "project")
    setup(month)
    month.note("setup", "3 goals, 3 agents", "57 todos, 2 sinks (one a directory)")
    faults = iter(PHASES[:5])
    while month.day < DAYS:
        base = START + timedelta(days=month.day)
        # Codex at 08:00 and 20:00 (alpha); Claude at 09:00 and 09:30 (beta); DSH at 10:00 and 10:30 (gamma)
        for at, agent in (
            (8 * 60, "codex"),
            (9 * 60, "claude"),
            (9 * 60 + 30, "claude"),
            (10 * 60, "dsh"),
            (10 * 60 + 30, "dsh"),
            (20 * 60, "codex"),
        ):
            month.clock.now = base + timedelta(minutes=at)
            goal = GOAL_OF[agent]
            trouble = Trouble()
            if agent != "dsh" or month.day >= 3:
                phase = next(faults, None) if month.day >= 1 and at in (8 * 60, 9 * 60) else None
                if phase:
                    trouble.fault = f"after:{phase}"
            ran = month.tick(agent, goal, trouble)
            if trouble.outcome or ran:
                month.note(
                    "turn" if ran else "tick", f"{agent}/{goal}", "; ".join(trouble.outcome) or "worked"
                )
        month.clock.now = base + timedelta(hours=21)
        doctor = month.owner(
            "doctor",
            "--check",
            "state",
            "--check",
            "liveness",
            "--check",
            "notices",
            "-f",
            "json",
            codes=frozenset({0, 9}),
        )
        findings = json.loads(doctor.stdout)["findings"]
        if findings:
            month.note("doctor", "owner", ", ".join(sorted({f["code"] for f in findings})))
        month.clock.now = base + timedelta(days=1, hours=7)
        if all(set(month.todos(g).values()) == {"done"} for g in ("alpha", "beta", "gamma")):
            break
    lines = sink_lines(month)
    print()
    for row in month.timeline:
        print(" | ".join(row))
    print(Counter(n.get("event") for n in lines))
    for goal in ("alpha", "beta", "gamma"):
        print(goal, Counter(month.todos(goal).values()))


# -- defects the month ran into, each a strict xfail of its own -------------------------------------
def _loopx(root: Path, now: str, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LOOPX_BIN), "--root", str(root), *args],
        capture_output=True,
        text=True,
        env={**_clean_env(), "LOOPX_NOW": now, "LOOPX_NOTIFY_FLUSH": "off"},
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        timeout=60,
        check=False,
    )


def _project(root: Path, now: str) -> None:
    root.mkdir()
    for args in (
        ["init"],
        ["goal", "add", "-g", "g", "-o", "o"],
        ["agent", "register", "-a", "x", "--cadence-minutes", "60"],
        ["agent", "register", "-a", "y", "--cadence-minutes", "60"],
        ["todo", "add", "-g", "g", "--title", "one"],
        ["todo", "add", "-g", "g", "--title", "two"],
    ):
        assert _loopx(root, now, *args).returncode == 0, args


def test_the_claude_stop_hook_records_the_agents_heartbeat(tmp_path: Path) -> None:
    root = tmp_path / "p"
    _project(root, "2026-12-01T07:00:00Z")
    event = {"session_id": "s", "transcript_path": str(tmp_path / "t.jsonl"), "cwd": str(root)}
    stop = json.dumps({**event, "hook_event_name": "Stop", "stop_hook_active": False})
    for hour in range(8, 12):  # a Stop event every hour: never silent for two cadences
        assert (
            _loopx(
                root, f"2026-12-01T{hour:02d}:00:00Z", "hook", "claude-stop", "-g", "g", "-a", "x", stdin=stop
            ).returncode
            == 0
        )
    health = json.loads(_loopx(root, "2026-12-01T11:00:00Z", "health", "list", "-f", "json").stdout)
    assert {a["agent_id"]: a["status"] for a in health["agents"]}["x"] == "live", health


def test_after_lease_lost_the_agent_is_not_sent_back_to_the_lost_turn(tmp_path: Path) -> None:
    root = tmp_path / "p"
    _project(root, "2026-12-01T07:00:00Z")
    t0, t1 = "2026-12-01T08:00:00Z", "2026-12-01T10:00:00Z"
    begun = json.loads(_loopx(root, t0, "turn", "begin", "-g", "g", "-a", "x", "-t", "t1").stdout)
    other = json.loads(_loopx(root, t1, "turn", "begin", "-g", "g", "-a", "y", "-t", "t1").stdout)
    done = ["--summary", "s", "--validation-status", "passed", "--evidence", "e"]
    assert (
        _loopx(root, t1, "writeback", "-g", "g", "-a", "y", "--turn-key", other["turn_key"], *done).returncode
        == 0
    )
    assert (
        _loopx(root, t1, "quota", "spend", "-g", "g", "-a", "y", "--turn-key", other["turn_key"]).returncode
        == 0
    )
    assert (
        _loopx(root, t1, "todo", "complete", "-g", "g", "-t", "t1", "-a", "y", "--evidence", "e").returncode
        == 0
    )
    lost = _loopx(root, t1, "writeback", "-g", "g", "-a", "x", "--turn-key", begun["turn_key"], *done)
    assert lost.returncode == 19, lost.stderr
    packet = json.loads(_loopx(root, t1, "quota", "should-run", "--goal-id", "g", "--agent-id", "x").stdout)
    assert packet["effective_action"] != "resume_turn", packet["reason"]
