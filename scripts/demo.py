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

    def run(self, *args: str, at: str, show: bool = True) -> str:
        """Run `loopx ARGS` at the story time `at` (HH:MM on the demo day); print and return stdout."""
        env = {**self.env, "LOOPX_NOW": f"2026-11-29T{at}:00Z"}
        proc = subprocess.run(
            [LOOPX, *args], capture_output=True, text=True, env=env, cwd=self.root, check=False
        )
        if show:
            print(f"{DIM}[{at}]{RESET} $ loopx {shlex.join(args)}")
            out = proc.stdout.strip()
            if out:
                print("    " + out.replace("\n", "\n    "))
        if proc.returncode not in (0,):
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
        s.run(
            "goal",
            "add",
            "-g",
            "parser",
            "-o",
            "Ship a tested parser",
            "--compute",
            "0.5",
            "-f",
            "markdown",
            at="11:55",
        )
        s.run(
            "agent", "register", "-a", "builder", "-c", "python", "-c", "shell", "-f", "markdown", at="11:55"
        )
        s.run("agent", "register", "-a", "reviewer", "-c", "review", "-f", "markdown", at="11:55")

        s.chapter(
            "2. Todos", "Deploying needs a capability no agent has; the builder may never deploy (excluded)."
        )
        s.run(
            "todo",
            "add",
            "-g",
            "parser",
            "--title",
            "Deploy to staging",
            "-p",
            "0",
            "-c",
            "deploy",
            "--exclude-agent",
            "builder",
            "-f",
            "markdown",
            at="11:56",
        )
        s.run(
            "todo",
            "add",
            "-g",
            "parser",
            "--title",
            "Write the tokenizer",
            "-p",
            "1",
            "-c",
            "python",
            "-f",
            "markdown",
            at="11:56",
        )
        s.run(
            "todo",
            "add",
            "-g",
            "parser",
            "--title",
            "Write the grammar",
            "-p",
            "2",
            "-c",
            "python",
            "-f",
            "markdown",
            at="11:56",
        )
        s.run("todo", "list", "-g", "parser", at="11:56")

        s.chapter(
            "3. Each agent's heartbeat asks should-run",
            "The builder gets the tokenizer (deploy is excluded for it):",
        )
        s.run("quota", "should-run", "-g", "parser", "-a", "builder", "-f", "markdown", at="12:00")
        packet = json.loads(
            s.run("quota", "should-run", "-g", "parser", "-a", "builder", at="12:00", show=False)
        )
        print(
            f"    (the JSON packet a host reads is {len(json.dumps(packet, separators=(',', ':')).encode())} bytes)"
        )
        print(
            "\nThe reviewer's best todo needs `deploy`, which no agent has: the capability gate asks the owner."
        )
        s.run("quota", "should-run", "-g", "parser", "-a", "reviewer", "-f", "markdown", at="12:00")

        s.chapter("4. The builder claims its todo, works 7 minutes, and the turn is charged")
        s.run("todo", "claim", "-g", "parser", "-t", "t2", "-a", "builder", "-f", "markdown", at="12:00")
        print("    ... the agent edits files for seven minutes ...")
        instance = packet["settlement_plan"]["identity"]["turn_instance_id"]
        s.run(
            "quota",
            "spend",
            "-g",
            "parser",
            "-a",
            "builder",
            "-t",
            "t2",
            "--turn-instance-id",
            instance,
            "-f",
            "markdown",
            at="12:07",
        )
        s.run(
            "quota",
            "spend",
            "-g",
            "parser",
            "-a",
            "builder",
            "-t",
            "t2",
            "--turn-instance-id",
            instance,
            "-f",
            "markdown",
            at="12:08",
        )
        print("    (a retried spend for the same turn is charged once)")
        s.run(
            "todo",
            "complete",
            "-g",
            "parser",
            "-t",
            "t2",
            "-a",
            "builder",
            "-e",
            "tokenizer tests pass",
            "-f",
            "markdown",
            at="12:08",
        )

        s.chapter("5. Where things stand", "Who must act next, across goals:")
        s.run(
            "goal",
            "add",
            "-g",
            "docs",
            "-o",
            "Write the user guide",
            "--compute",
            "0",
            "-f",
            "markdown",
            at="12:09",
        )
        s.run("quota", "status", "-g", "parser", "-f", "markdown", at="12:09")
        s.run("status", at="12:09")
        print(f"\n{BOLD}Done.{RESET} The temporary project is removed; nothing was written outside it.")


if __name__ == "__main__":
    main()
