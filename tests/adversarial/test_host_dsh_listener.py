"""Class: DSH's listener is its loop's scheduler, and `/loopx <task>` starts a loop from DSH.

The installed package's modules run under Node 22 (the rows of its cordis patch), against a real
project, with a fake agent that records what it is steered or handed. LoopX runs for real,
through a wrapper installed as the facade's LoopX command that can make `should-run` fail as a
host would see it (exit 6, one line). Shown:

- a boundary that steers acks the packet it followed (`scheduler_hint.dsh.ack_hint`), and the
  same packet at the next boundary is neither acked nor steered again;
- every way the listener cannot drive the loop while LoopX itself runs (should-run exiting with
  an error, printing no packet) is reported with `scheduler-fail`: the next packet carries the
  failures and the last error; the next ack ends them;
- `/loopx <task>` adds the task through `loopx start` (a goal created when none is installed
  or given) and queues the first turn with the packet's actions; malformed input is the usage
  line; `/loopx` alone still shows the should-run packet.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests import facades, hostclis
from tests.builders import build_project
from tests.conftest import LOOPX_BIN

HARNESS = """
import { pathToFileURL } from "node:url";
const [modulesJson, cwd, action, input] = process.argv.slice(2);
const listeners = {}, commands = {}, warnings = [];
const ctx = {
  on: (event, fn) => { listeners[event] = fn; },
  effect: (fn) => { const it = fn(); let step = it.next(); while (!step.done) step = it.next(step.value); },
  commands: { register: (command) => { commands[command.name] = command; return () => {}; } },
  logger: { warn: (message) => warnings.push(String(message)) },
};
for (const [id, file] of JSON.parse(modulesJson)) {
  const module = await import(pathToFileURL(file));
  module.apply(ctx);
}
const agent = { session: { header: { cwd } }, steered: [], followups: [],
  steer(m) { this.steered.push(m.content[0].text); }, followup(m) { this.followups.push(m.content[0].text); } };
const signal = new AbortController().signal;
const out = { warnings };
for (const step of action.split(",")) {
  if (step === "boundary") await listeners["agent/turn-stopping"]({ agent, turn: 1, signal });
  else out.shown = await commands["loopx"].handler({ rawInput: input, agent, signal });
}
Object.assign(out, { steered: agent.steered, followups: agent.followups });
console.log(JSON.stringify(out));
"""
WRAPPER = """#!/bin/sh
if [ "$2" = "should-run" ] && [ -e "$LOOPX_TEST_FAIL" ]; then
  cat "$LOOPX_TEST_FAIL" >&2; exit "$(cat "$LOOPX_TEST_FAIL.code")"
fi
exec {loopx} "$@"
"""


class Dsh:
    """A project with DSH's facade installed (project scope), and its modules run under Node."""

    def __init__(self, tmp_path: Path, *, goal: str | None = "demo") -> None:
        self.root = tmp_path / "project"
        build_project(self.root, goal="demo", agents=("builder",), todo_count=1)
        wrapper = tmp_path / "loopx-wrapper"
        wrapper.write_text(WRAPPER.format(loopx=LOOPX_BIN))
        wrapper.chmod(0o755)
        self.fail = tmp_path / "fail"
        self.env = {
            **{k: v for k, v in os.environ.items() if k not in ("LOOPX_ROOT", "LOOPX_NOW")},
            "LOOPX_TEST_FAIL": str(self.fail),
        }
        ids = ["-g", goal, "-a", "builder"] if goal else ["-a", "builder"]
        done = self.loopx(
            "workflow-skills", "--install", "--surface", "dsh", "--loopx-command", str(wrapper), *ids
        )
        assert done.returncode == 0, done.stderr
        (package,) = facades.dsh_packages(self.root / ".dsh" / "plugins")
        self.modules = [(row, str(file)) for row, file in facades.dsh_modules(package)]
        self.harness = tmp_path / "harness.mjs"
        self.harness.write_text(HARNESS)

    def loopx(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Run LoopX itself in the project."""
        return subprocess.run(
            [str(LOOPX_BIN), *args], cwd=self.root, env=self.env, capture_output=True, text=True, check=False
        )

    def run(self, action: str, text: str = "") -> dict[str, Any]:
        """Run `action` (`boundary` and/or `command`, comma-separated) in one DSH process."""
        node = hostclis.NODE22 / "node"
        assert node.exists(), "Node 22 is missing: run scripts/install-hosts.sh"
        proc = subprocess.run(
            [str(node), str(self.harness), json.dumps(self.modules), str(self.root), action, text],
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout.strip().splitlines()[-1])

    def scheduler(self) -> dict[str, Any]:
        """The builder's scheduler entry (what the acks and failures recorded)."""
        path = self.root / ".loopx/goals/demo/scheduler.json"
        return json.loads(path.read_text())["agents"]["builder"] if path.exists() else {}

    def hint(self) -> dict[str, Any]:
        """The scheduler hint of the packet DSH gets now."""
        asked = self.loopx("quota", "should-run", "-g", "demo", "-a", "builder", "--surface", "dsh")
        return json.loads(asked.stdout)["scheduler_hint"]

    def make_should_run_fail(self, line: str, code: int) -> None:
        """From now on the facade's LoopX fails should-run with `line` and `code`."""
        self.fail.write_text(line + "\n")
        Path(f"{self.fail}.code").write_text(str(code))


def test_a_boundary_that_steers_acks_the_packet_once(tmp_path: Path) -> None:
    dsh = Dsh(tmp_path)
    assert dsh.hint()["ack_expected"] is True
    first = dsh.run("boundary,boundary")
    assert first["warnings"] == [] and len(first["steered"]) == 1, first  # never the same steering twice
    acked = dsh.scheduler()
    assert acked["fingerprint"] == dsh.hint()["fingerprint"] and acked["failures"] == 0
    assert dsh.hint()["ack_expected"] is False
    again = dsh.run("boundary")
    assert dsh.scheduler() == acked, "the same packet was acked twice"
    assert len(again["steered"]) == 1  # a new DSH process steers afresh


@pytest.mark.parametrize(
    ("line", "code", "error"),
    [
        (
            "loopx: error: lock timeout on goal demo",
            6,
            "should-run exited with code 6: loopx: error: lock timeout",
        ),
        ("", 0, "should-run printed no JSON packet"),
        ("loopx: internal error", 1, "should-run exited with code 1: loopx: internal error"),
    ],
    ids=["exit-6", "no-packet", "exit-1"],
)
def test_what_keeps_the_listener_from_driving_is_reported(
    tmp_path: Path, line: str, code: int, error: str
) -> None:
    dsh = Dsh(tmp_path)
    dsh.make_should_run_fail(line, code)
    for count in (1, 2):
        answer = dsh.run("boundary")
        assert answer["steered"] == [] and len(answer["warnings"]) == 1, answer
        hint = dsh.hint()
        assert hint["failures"] == count and hint["last_error"].startswith(error), hint
        assert hint["ack_expected"] is True
    dsh.fail.unlink()
    recovered = dsh.run("boundary")
    assert recovered["warnings"] == [] and len(recovered["steered"]) == 1
    assert "failures" not in dsh.hint() and dsh.scheduler()["failures"] == 0  # the ack ended them


def test_loopx_with_a_task_starts_and_queues_the_first_turn(tmp_path: Path) -> None:
    dsh = Dsh(tmp_path)
    answer = dsh.run("command", "  Write   the lexer ")
    assert answer["shown"]["kind"] == "success", answer
    assert answer["shown"]["text"].startswith("LoopX: added todo t2 to goal demo."), answer
    todos = json.loads(dsh.loopx("todo", "list", "-g", "demo", "-f", "json").stdout)
    titles = [t["title"] for t in (todos["todos"] if isinstance(todos, dict) else todos)]
    assert "Write the lexer" in titles
    (turn,) = answer["followups"]
    assert facades.numbered_actions(turn)[0].startswith("loopx turn begin --goal-id demo --agent-id builder")
    assert facades.loopx_command_named(turn)[0].endswith("loopx-wrapper")


def test_loopx_with_a_task_and_no_installed_goal_finds_or_creates_one(tmp_path: Path) -> None:
    dsh = Dsh(tmp_path, goal=None)
    answer = dsh.run("command", "Ship the parser")  # demo is the only active goal: the task joins it
    assert answer["shown"]["text"].startswith("LoopX: added todo t2 to goal demo."), answer
    assert dsh.loopx("goal", "add", "-g", "other", "-o", "Another goal").returncode == 0
    answer = dsh.run("command", "Write docs")  # two active goals: LoopX's one line, as it is
    assert answer["shown"] == {
        "kind": "error",
        "text": "loopx: error: several active goals (demo, other): pass --goal-id",
    }
    for goal in ("demo", "other"):
        assert dsh.loopx("goal", "stop", "-g", goal).returncode == 0
    answer = dsh.run("command", "Write docs")  # no active goal: a new one, named after the task
    assert answer["shown"]["kind"] == "success" and "(a new goal)" in answer["shown"]["text"], answer
    assert len(answer["followups"]) == 1


@pytest.mark.parametrize("text", ["-g", "-a builder -g", "--goal-id", "-x task", "-g demo -a"])
def test_malformed_input_is_the_usage_line(tmp_path: Path, text: str) -> None:
    answer = Dsh(tmp_path).run("command", text)
    assert answer["shown"] == {
        "kind": "error",
        "text": "Usage: /loopx [-g <goal-id>] [-a <agent-id>] [<task>]",
    }
    assert answer["followups"] == []


def test_loopx_alone_shows_the_packet(tmp_path: Path) -> None:
    answer = Dsh(tmp_path).run("command", "")
    assert answer["shown"]["kind"] == "success"
    assert answer["shown"]["text"].startswith("# should-run: RUN (goal `demo`, agent `builder`)")
    assert answer["followups"] == []
