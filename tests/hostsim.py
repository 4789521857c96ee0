"""A scripted host for end-to-end loops: it replays heartbeats and obeys the packets exactly.

Every step is a real process (`loopx ...`, `node` for the DSH listener, a real MCP server);
the stand-in agent "works" by writing a source file for the todo it began.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.conftest import LOOPX_BIN


@dataclass
class Sim:
    """A project driven by scripted heartbeats."""

    root: Path
    worked: list[tuple[str, str]] = field(default_factory=list)
    """(agent, todo) in the order the agent did the work."""
    commands: list[str] = field(default_factory=list)

    def loopx(
        self, *args: str, stdin: str | None = None, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Run `loopx` for this project."""
        full = {**os.environ, "LOOPX_ROOT": str(self.root), **(env or {})}
        full.pop("LOOPX_NOW", None)
        return subprocess.run(
            [str(LOOPX_BIN), *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=full,
            cwd=self.root,
            check=False,
        )

    def ok(self, *args: str) -> dict[str, Any]:
        """Run `loopx` and parse its JSON; the command must succeed."""
        proc = self.loopx(*args)
        assert proc.returncode == 0, (args, proc.stderr)
        return json.loads(proc.stdout) if proc.stdout.strip() else {}

    def should_run(self, agent: str, surface: str | None = None) -> dict[str, Any]:
        """The packet."""
        return self.ok(
            "quota", "should-run", "-g", "g", "-a", agent, *(["--surface", surface] if surface else [])
        )

    def work(self, agent: str, todo: str) -> None:
        """The stand-in agent's work: a file per todo."""
        path = self.root / "src" / f"{todo}.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"# written by {agent}\ndef {todo}():\n    return {todo!r}\n")
        self.worked.append((agent, todo))

    def execute(self, agent: str, actions: Iterable[str], *, stop_after: str | None = None) -> bool:
        """Run the packet's actions in order, filling placeholders; False if one failed or we 'crashed'.

        Like a careful agent, it closes the goal (terminal closeout) when it completes the last
        open todo.
        """
        todo = key = None
        for action in actions:
            words = [self._fill(w, todo) for w in shlex.split(action)]
            assert words[0] == "loopx", action
            if "--turn-key" in words:
                key = words[words.index("--turn-key") + 1]
            if (
                words[1:3] == ["todo", "complete"]
                and key
                and self._last_open(words[words.index("--todo-id") + 1])
            ):
                words += ["--no-follow-up", "--turn-key", key]
            proc = self.loopx(*words[1:])
            self.commands.append(action)
            if proc.returncode != 0:
                return False
            if words[1:3] == ["turn", "begin"]:
                todo = json.loads(proc.stdout).get("todo_id")
                if todo:
                    self.work(agent, todo)
            if stop_after and words[1] == stop_after:
                return False  # the host dies here
        return True

    def _last_open(self, todo: str) -> bool:
        return [t for t, status in self.todos().items() if status in ("open", "claimed")] == [todo]

    @staticmethod
    def _fill(word: str, todo: str | None) -> str:
        return (
            word.replace("<summary>", f"wrote src/{todo}.py")
            .replace("<evidence>", "python -m py_compile ok")
            .replace("<next step>", "next")
        )

    # -- what the ledger and the store say ---------------------------------------------
    def spends(self) -> list[dict[str, Any]]:
        """Every spend event."""
        path = self.root / ".loopx/goals/g/events.jsonl"
        lines = path.read_text().splitlines() if path.exists() else []
        return [e for e in map(json.loads, lines) if e["kind"] == "spend"]

    def todos(self) -> dict[str, str]:
        """todo id -> status."""
        state = json.loads((self.root / ".loopx/goals/g/state.json").read_text())
        return {t["todo_id"]: t["status"] for t in state["todos"]}

    def runs(self) -> list[dict[str, Any]]:
        """The run index."""
        path = self.root / ".loopx/goals/g/runs/index.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


# -- the three host protocols -------------------------------------------------------------
def codex_tick(sim: Sim, agent: str, **kw: Any) -> dict[str, Any]:
    """Codex App: the heartbeat prompt's protocol (should-run with the surface, actions, ack)."""
    packet = sim.should_run(agent, "codex-app")
    if packet["should_run"]:
        sim.execute(agent, packet["interaction_contract"]["cli_channel"]["next_cli_actions"], **kw)
    ack = packet["scheduler_hint"]["codex_app"]["ack_hint"]["cli_args"]
    sim.ok(*ack)
    return packet


def claude_tick(sim: Sim, agent: str, session: str = "s", active: bool = True, **kw: Any) -> bool:
    """Claude Code: the Stop hook decides; on block the agent runs the commands in the reason."""
    event = json.dumps(
        {"session_id": session, "hook_event_name": "Stop", "stop_hook_active": active, "cwd": str(sim.root)}
    )
    answer = sim.loopx("hook", "claude-stop", "-g", "g", "-a", agent, stdin=event)
    assert answer.returncode == 0, answer.stderr
    if not answer.stdout.strip():
        return False
    reason = json.loads(answer.stdout)["reason"]
    actions = [m.group(1) for m in re.finditer(r"^\d+\. (loopx .*)$", reason, re.M)]
    sim.execute(agent, actions, **kw)
    return True


DSH_HARNESS = """
import { pathToFileURL } from "node:url";
const [pkg, cwd] = process.argv.slice(2);
const turn = await import(pathToFileURL(`${pkg}/lib/turn-boundary.js`));
const listeners = {};
turn.apply({ on: (n, f) => { listeners[n] = f; }, logger: { warn: (m) => console.error(m) } });
const agent = { session: { header: { cwd } }, steered: [], steer(m) { this.steered.push(m); } };
await listeners["agent/turn-stopping"]({ agent, turn: 1, signal: new AbortController().signal });
console.log(JSON.stringify(agent.steered.map((m) => m.content[0].text)));
"""


def dsh_tick(sim: Sim, node: Path, package: Path, **kw: Any) -> bool:
    """DSH: the real turn-boundary module (run by node) steers the agent; the agent runs the actions."""
    harness = sim.root.parent / "dsh-harness.mjs"
    harness.write_text(DSH_HARNESS)
    env = {**os.environ, "LOOPX_ROOT": str(sim.root), "PATH": f"{LOOPX_BIN.parent}:{os.environ['PATH']}"}
    env.pop("LOOPX_NOW", None)
    proc = subprocess.run(
        [str(node), str(harness), str(package), str(sim.root)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    steered = json.loads(proc.stdout.strip().splitlines()[-1])
    if not steered:
        return False
    actions = [m.group(1) for m in re.finditer(r"^\d+\. (loopx .*)$", steered[0], re.M)]
    sim.execute("builder", actions, **kw)
    return True
