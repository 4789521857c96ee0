"""A month of scripted hosts on one project: several goals, a virtual clock, injected trouble.

`GoalSim` is `tests.hostsim.Sim` for one goal of a shared project: each of its hosts is
installed with the real CLI into a home of its own (named by goal and agent), every command
runs at the month's virtual time (`LOOPX_NOW`), and its stand-in agent can be made to crash
inside a command (`LOOPX_FAULT`), to pause mid-turn, to lose its lease, or to replan nothing.
The hosts themselves (`codex_tick`, `claude_tick`, `dsh_tick`) are hostsim's, unchanged.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from tests.conftest import LOOPX_BIN
from tests.hostsim import CLOSEOUT_REFUSED, Host, Sim, _fill, host_env

FAULT_EXIT = 86
LEASE_LOST = 19

EXTRA: dict[tuple[str, ...], frozenset[int]] = {
    ("turn", "cancel"): frozenset({0}),
    ("todo", "add"): frozenset({0}),
}
"""Commands outside hostsim's table a month's agent runs: a replan's `todo add` (named by the
packet) and `turn cancel` after its lease was lost (docs/settlement.md: it stops an open turn)."""


@dataclass
class Clock:
    """The month's virtual time, shared by every host (`LOOPX_NOW` on every command)."""

    now: datetime

    @property
    def iso(self) -> str:
        """The time as LoopX reads it."""
        return self.now.strftime("%Y-%m-%dT%H:%M:%SZ")

    def advance(self, **delta: float) -> None:
        """Move the clock forward."""
        self.now += timedelta(**delta)


@dataclass
class Trouble:
    """What the stand-in agent does differently on one turn."""

    fault: str | None = None
    """`after:<phase>` or `before_receipt:<phase>`: the command journaling that phase dies (exit 86)."""
    pause: Callable[[], None] | None = None
    """Called right after `turn begin` (a long pause in which the world moves on)."""
    replan_nothing: bool = False
    """On a replan turn, add no todo."""
    follow_up: bool = False
    """The agent knows more work follows: it never asks for the terminal closeout."""
    title: str = "next step"
    """The title a replan turn adds."""
    outcome: list[str] = field(default_factory=list)
    """What happened, filled in by `execute` (crashed, lease_lost, replanned, ...)."""


FAULT_COMMAND = {
    "host_execute": "writeback",
    "typed_result": "writeback",
    "validation": "writeback",
    "durable_writeback": "writeback",
    "quota_spend": "quota",
    "terminal_closeout": "todo",
}
"""The command that journals each settlement phase (docs/settlement.md)."""


@dataclass
class GoalSim(Sim):
    """hostsim's Sim for one goal of a shared project, on a shared virtual clock."""

    goal: str = "g"
    clock: Clock | None = None
    stderr: list[str] = field(default_factory=list)
    """Every command's stderr (each must be free of tracebacks)."""
    trouble: Trouble | None = None

    def install(self, agent: str, *, scope: str = "user", loopx_on_path: bool = True) -> Host:
        """Install the protocol's facade for `agent` on this goal, into a home of (goal, agent)."""
        home = self.root.parent / f"home-{self.goal}-{agent}"
        host = Host(agent, home, host_env(home, loopx_on_path=loopx_on_path))
        host.env["LOOPX_NOTIFY_FLUSH"] = "off"  # the owner's daily doctor delivers
        self.hosts[agent] = host
        args = ["workflow-skills", "--install", "--surface", self.protocol, "--scope", scope]
        self.run(agent, [str(LOOPX_BIN)], [*args, "-g", self.goal, "-a", agent], record=False)
        return host

    def run(
        self, agent: str, loopx: list[str], args: list[str], **kw: Any
    ) -> subprocess.CompletedProcess[str]:
        """hostsim's run at the clock's time, with the month's extra commands; stderr is kept."""
        env = self.hosts[agent].env
        if self.clock is not None:
            env["LOOPX_NOW"] = self.clock.iso
        if tuple(args[:2]) in EXTRA:
            proc = self._run_extra(agent, loopx, args)
        else:
            proc = super().run(agent, loopx, args, **kw)
        self.stderr.append(proc.stderr)
        return proc

    def _run_extra(self, agent: str, loopx: list[str], args: list[str]) -> subprocess.CompletedProcess[str]:
        host = self.hosts[agent]
        proc = subprocess.run(
            [*loopx, *args],
            capture_output=True,
            text=True,
            env=host.env,
            cwd=self.root,
            stdin=subprocess.DEVNULL,
            timeout=120,
            check=False,
        )
        assert proc.returncode in EXTRA[tuple(args[:2])], f"{agent}: loopx {shlex.join(args)}: {proc.stderr}"
        return proc

    # -- the ledger and the store of this goal, from the files --------------------------------
    def _goal(self) -> Path:
        return self.root / ".loopx" / "goals" / self.goal

    def goal_state(self) -> dict[str, Any]:
        """The goal's state file (a corrupt one reads as a goal without todos)."""
        try:
            return json.loads((self._goal() / "state.json").read_text())
        except ValueError:
            return {"todos": []}

    def todos(self) -> dict[str, str]:
        """todo id -> status (none while the state file is unreadable)."""
        return {t["todo_id"]: t["status"] for t in self.goal_state()["todos"]}

    # -- the stand-in agent, with trouble ---------------------------------------------------------
    def execute(
        self,
        agent: str,
        loopx: list[str],
        actions: list[str],
        instructions: str,
        *,
        stop_after: str | None = None,
    ) -> bool:
        """Run the handed actions as hostsim's agent does; False at a refusal or a crash.

        `self.trouble` (set for one tick) makes a command die inside a phase, pauses after the
        begin, replans nothing, or keeps the agent from the terminal closeout. A `lease_lost`
        refusal (exit 19) makes the agent cancel its lost turn.
        """
        trouble, self.trouble = self.trouble or Trouble(), None
        replan = any(shlex.split(a)[1:3] == ["turn", "begin"] and "--replan" in a for a in actions)
        phase = trouble.fault.split(":", 1)[1] if trouble.fault else None
        todo = key = None
        for action in actions:
            words = [_fill(w, todo) for w in shlex.split(action)]
            assert words[0] == "loopx", action
            args = words[1:]
            if "--turn-key" in args:
                key = args[args.index("--turn-key") + 1]
            if args[:2] == ["todo", "add"]:
                if trouble.replan_nothing:
                    continue  # the replan produced nothing
                args[args.index("--title") + 1] = trouble.title
            closeout = (
                args[:2] == ["todo", "complete"]
                and key is not None
                and "--no-follow-up" in instructions
                and not trouble.follow_up
            )
            if closeout:
                args = [*args, "--no-follow-up", "--turn-key", str(key)]
            dies = (
                phase is not None
                and args[0] == FAULT_COMMAND[phase]
                and (phase != "terminal_closeout" or closeout)
            )
            also = frozenset({CLOSEOUT_REFUSED} if closeout else set())
            if dies:
                self.hosts[agent].env["LOOPX_FAULT"] = str(trouble.fault)
                also |= {FAULT_EXIT}
            if args[0] == "writeback" and trouble.pause is not None:
                also |= {LEASE_LOST}
            try:
                proc = self.run(agent, loopx, args, also=also)
            finally:
                self.hosts[agent].env.pop("LOOPX_FAULT", None)
            if proc.returncode == CLOSEOUT_REFUSED:
                proc = self.run(agent, loopx, args[: args.index("--no-follow-up")])
            if proc.returncode == FAULT_EXIT:
                trouble.outcome.append(f"crashed {trouble.fault}")
                return False
            if proc.returncode == LEASE_LOST:
                trouble.outcome.append("lease_lost (exit 19)")
                cancel = [
                    "turn",
                    "cancel",
                    "--goal-id",
                    self.goal,
                    "--agent-id",
                    agent,
                    "--turn-key",
                    str(key),
                ]
                self.run(agent, loopx, [*cancel, "--reason", "lease lost"])
                return False
            assert proc.returncode == 0, (args, proc.returncode)
            if args[:2] == ["turn", "begin"]:
                todo = json.loads(proc.stdout).get("todo_id")
                if todo:
                    self.work(agent, f"{self.goal}_{todo}")
                if trouble.pause is not None:
                    trouble.pause()
                    if self.clock is not None:
                        self.hosts[agent].env["LOOPX_NOW"] = self.clock.iso
            if closeout:
                trouble.outcome.append("goal closed")
        if replan:
            trouble.outcome.append(
                "replanned nothing" if trouble.replan_nothing else f"replanned: {trouble.title}"
            )
        return True
