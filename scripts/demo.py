"""`make demo`: the LoopX story in a throw-away project, told through the real `loopx` CLI.

Nothing is written outside the temporary project: HOME and every host's config folder
point into it too.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

LOOPX = str(Path(sys.executable).parent / "loopx")
BOLD, DIM, RESET = ("\033[1m", "\033[2m", "\033[0m") if sys.stdout.isatty() else ("", "", "")

# A stand-in host: it "does the work" of the claimed todo by appending to a source file.
HOST_COMMAND = 'printf "def %s():\\n    return True\\n" "$(echo $LOOPX_TODO_ID)" >> parser.py'
VALIDATION_COMMAND = "python3 -m py_compile parser.py"


class Story:
    """Runs loopx commands in the demo project and prints them like a terminal session."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.env = {**os.environ, "LOOPX_ROOT": str(root)}
        for name in ("HOME", "CODEX_HOME", "CLAUDE_CONFIG_DIR", "DSH_HOME", "DSH_AGENTS_HOME"):
            self.env[name] = str(root / ".home" / name.lower())
        self.env.pop("LOOPX_NOW", None)

    def chapter(self, title: str, text: str = "") -> None:
        """Print a heading and a sentence of narration."""
        print(f"\n{BOLD}== {title}{RESET}")
        if text:
            print(text)

    def run(self, command: str, *extra: str, at: str, show: bool = True, ok: tuple[int, ...] = (0,)) -> str:
        """Run `loopx COMMAND EXTRA...` at story time `at` (HH:MM); print and return stdout."""
        args = [*shlex.split(command), *extra]
        env = {**self.env, "LOOPX_NOW": f"2026-11-29T{at}:00Z"}
        # Shown as on a terminal: what a terminal gets by default (`auto` is human there; the
        # demo's stdout is a pipe, so it asks for it). Read back by the story: JSON, as piped.
        chosen = any(a in ("-f", "--format") or a.startswith("--format=") for a in args)
        run = [*args, "--format", "human"] if show and not chosen else args
        proc = subprocess.run(
            [LOOPX, *run], capture_output=True, text=True, env=env, cwd=self.root, check=False
        )
        if show:
            print(f"{DIM}[{at}]{RESET} $ loopx {shlex.join(args)}")
            out = (proc.stdout.strip() if proc.returncode in (0,) else proc.stderr.strip()) or ""
            if out:
                print("    " + out.replace("\n", "\n    "))
        if proc.returncode not in ok:
            sys.stderr.write(proc.stderr)
            raise SystemExit(f"demo step failed ({proc.returncode}): loopx {shlex.join(args)}")
        return proc.stdout


def main() -> None:
    """Tell the story."""
    with tempfile.TemporaryDirectory(prefix="loopx-demo-") as folder:
        root = Path(folder) / "project"
        root.mkdir()
        s = Story(root)
        print(f"LoopX demo in a temporary project: {root}")

        s.chapter(
            "1. A goal, its quota and two agents",
            "The goal may use half of every 24h window (720 one-minute slots).",
        )
        s.run("init", at="11:55")
        s.run("goal add -g parser -o 'Ship a tested parser' --compute 0.5 -f markdown", at="11:55")
        s.run("agent register -a builder -c python -c shell -f markdown", at="11:55")
        s.run("agent register -a reviewer -c review -f markdown", at="11:55")

        s.chapter(
            "2. Todos",
            "Deploying needs a capability no agent has, and the builder may never deploy (excluded).",
        )
        s.run(
            "todo add -g parser --title 'Deploy to staging' -p 0 -c deploy --exclude-agent builder -f markdown",
            at="11:56",
        )
        s.run("todo add -g parser --title 'Write the tokenizer' -p 1 -c python -f markdown", at="11:56")
        s.run("todo add -g parser --title 'Write the grammar' -p 2 -c python -f markdown", at="11:56")
        s.run("todo list -g parser", at="11:56")

        s.chapter("3. Each agent's heartbeat asks should-run", "The builder gets the tokenizer:")
        s.run("quota should-run -g parser -a builder -f markdown", at="12:00")
        packet = json.loads(s.run("quota should-run -g parser -a builder", at="12:00", show=False))
        print(
            f"    (the JSON packet a host reads is {len(json.dumps(packet, separators=(',', ':')).encode())} bytes)"
        )
        print(
            "\nThe reviewer has only `review`: its first todo needs `deploy`, which no agent has,"
            " so the capability gate stops it and asks the owner."
        )
        s.run("quota should-run -g parser -a reviewer -f markdown", at="12:00")

        s.chapter(
            "4. One turn by hand: begin, work, writeback, spend",
            "The host runs exactly the packet's next actions.",
        )
        plan = packet["settlement_plan"]
        key, instance = plan["turn_key"], plan["identity"]["turn_instance_id"]
        s.run(f"turn begin -g parser -a builder -t t2 --turn-instance-id {instance} -f markdown", at="12:00")
        print("    ... the agent edits files for seven minutes ...")
        s.run(f"quota spend -g parser -a builder -k {key}", at="12:06", ok=(13,))
        print("    (spending before the writeback is refused: writeback_missing, exit 13)")
        s.run(
            f"writeback -g parser -a builder -k {key} -s 'Tokenizer with tests' --validation-status passed "
            "-e 'pytest: 12 passed' --changed-file parser/tokenizer.py -f markdown",
            at="12:07",
        )
        s.run(f"quota spend -g parser -a builder -k {key} -f markdown", at="12:07")
        s.run(f"quota spend -g parser -a builder -k {key} -f markdown", at="12:08")
        print("    (a retried spend returns its receipt: the turn is charged once)")
        s.run("todo complete -g parser -t t2 -a builder -e 'tokenizer tests pass' -f markdown", at="12:08")

        s.chapter(
            "5. One governed turn by the turn driver",
            "`turn run-once` runs a stand-in host command that edits parser.py, validates it,\n"
            "then journals the writeback and the spend, all in-process.",
        )
        s.run(
            "turn run-once -g parser -a builder",
            "--host-command",
            HOST_COMMAND,
            "--validation-command",
            VALIDATION_COMMAND,
            "-f",
            "markdown",
            at="12:10",
        )
        print(
            "    parser.py now holds:\n      "
            + (root / "parser.py").read_text().strip().replace("\n", "\n      ")
        )
        index = (root / ".loopx/goals/parser/runs/index.jsonl").read_text().splitlines()
        last = json.loads(index[-1])
        print(f"    run log: {len(index)} runs indexed; last {last['run_id']} for todo {last['todo_id']}")
        s.run(f"turn inspect-journal -g parser -a builder -k {last['turn_key']} -f markdown", at="12:11")

        s.chapter(
            "6. A heartbeat loop",
            "Three more todos; the builder's Codex heartbeat runs each tick: should-run, the packet's\n"
            "next actions (the stand-in agent writes a file), then the scheduler ack. One line a tick.",
        )
        for title in ("Write the parser tests", "Document the grammar", "Benchmark the parser"):
            s.run("todo add -g parser --title", title, "-c", "python", at="12:14", show=False)
        heartbeat(s, "builder", start=15)

        s.chapter("7. Where things stand", "Who must act next, across goals:")
        s.run("goal add -g docs -o 'Write the user guide' --compute 0 -f markdown", at="12:45")
        s.run("quota status -g parser -f markdown", at="12:45")
        s.run("status", at="12:45")
        print(f"\n{BOLD}Done.{RESET} The temporary project is removed; nothing was written outside it.")


def heartbeat(s: Story, agent: str, *, start: int, limit: int = 8) -> None:
    """Replay the Codex heartbeat until the agent has nothing to run (done, waiting or throttled)."""
    for tick in range(1, limit + 1):
        minute = start + (tick - 1) * 5
        at = f"{12 + minute // 60:02d}:{minute % 60:02d}"
        packet = json.loads(
            s.run(f"quota should-run -g parser -a {agent} --surface codex-app", at=at, show=False)
        )
        hint = packet["scheduler_hint"]
        line = f"tick {tick} [{at}] {agent}: {packet['decision']} {packet['effective_action']}"
        later = f"{12 + (minute + 3) // 60:02d}:{(minute + 3) % 60:02d}"
        if packet["should_run"]:
            todo = (packet.get("selected_todo") or {}).get("todo_id")
            for action in packet["interaction_contract"]["cli_channel"]["next_cli_actions"]:
                words = [
                    w.replace("<summary>", f"did {todo}").replace("<evidence>", "compiles")
                    for w in shlex.split(action)
                ]
                s.run(shlex.join(words[1:]), at=at if words[1:3] == ["turn", "begin"] else later, show=False)
                if words[1:3] == ["turn", "begin"]:
                    with (s.root / "parser.py").open("a") as source:
                        source.write(f"def {todo}():\n    return True\n")
            spent = json.loads(s.run("quota status -g parser", at=later, show=False))["spent_slots"]
            line += f" {todo} -> settled; {spent} slots spent"
        else:
            line += f" ({packet['quota']['state']}: {packet['reason']})"
        s.run(shlex.join(hint["codex_app"]["ack_hint"]["cli_args"]), at=at, show=False)
        print(f"{line}; next wake {hint['recommended_rrule'] or 'paused'}")
        if not packet["should_run"]:
            return


if __name__ == "__main__":
    main()
