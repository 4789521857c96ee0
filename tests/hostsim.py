"""Scripted hosts for end-to-end loops: each runs exactly what its installed facade contains.

Every host installs its facade with the real `loopx workflow-skills --install` into a home of
its own, then reads it back from disk as the host would: Claude Code runs the Stop (and
SessionStart) hook commands of the settings files it reads, feeding them the event JSON it
sends; the Codex App reads its automation's prompt and runs the should-run and ack commands
the prompt names; DSH loads the modules of the installed package's cordis patch under Node 22.
The stand-in agent runs the commands the host hands it (a packet's next actions, a hook's
reason, a steering message), checks every exit code against what the protocol permits, and
"works" by writing a source file for the todo it began.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests import facades, hostclis
from tests.conftest import LOOPX_BIN

GOAL = "g"

ALLOWED: dict[tuple[str, ...], frozenset[int]] = {
    ("quota", "should-run"): frozenset({0}),
    ("quota", "scheduler-ack"): frozenset({0}),
    ("quota", "scheduler-fail"): frozenset({0}),
    ("turn", "begin"): frozenset({0}),
    ("writeback",): frozenset({0}),
    ("quota", "spend"): frozenset({0}),
    ("todo", "complete"): frozenset({0}),
    ("goal", "stop"): frozenset({0}),
    ("hook",): frozenset({0}),
    ("workflow-skills",): frozenset({0}),
}
"""The exit codes each command may end with when nothing races (docs/cli.md); any other fails."""

RACING: dict[tuple[str, ...], frozenset[int]] = {("turn", "begin"): frozenset({5, 16})}
"""What another agent ticking at the same time adds: a begin can lose the todo's lease CAS (5),
or come from a packet gone stale because the other agent finished that todo meanwhile (16,
permission_denied: status_done)."""

CLOSEOUT_REFUSED = 18
"""`todo complete --no-follow-up` while another todo is still open: complete it without."""


def command_key(args: list[str]) -> tuple[str, ...]:
    """The table key of a `loopx` command line (its words after the LoopX command)."""
    for size in (2, 1):
        if tuple(args[:size]) in ALLOWED:
            return tuple(args[:size])
    raise AssertionError(f"the host was handed a command outside the protocol: loopx {shlex.join(args)}")


@dataclass
class Step:
    """One command a host or its agent ran."""

    agent: str
    loopx: list[str]
    """The LoopX command it ran as (a shell command line for a hook)."""
    args: list[str]
    code: int
    started: float
    ended: float


@dataclass
class Host:
    """One agent's host: its own home (and host config folders) on the shared project."""

    agent: str
    home: Path
    env: dict[str, str]
    session: str | None = None
    """Claude Code: the current session id (None until one starts)."""
    blocked: bool = False
    """Claude Code: the last Stop hook blocked (the next Stop event says stop_hook_active)."""

    @property
    def claude_dir(self) -> Path:
        """CLAUDE_CONFIG_DIR."""
        return Path(self.env["CLAUDE_CONFIG_DIR"])

    @property
    def codex_home(self) -> Path:
        """CODEX_HOME."""
        return Path(self.env["CODEX_HOME"])


def host_env(home: Path, *, loopx_on_path: bool) -> dict[str, str]:
    """A host's environment: every host home inside `home`, LoopX on PATH or not, no LOOPX_*."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOOPX_")}
    bin_dir = str(LOOPX_BIN.parent)
    path = [p for p in env.get("PATH", "").split(os.pathsep) if p and p != bin_dir]
    env.update(
        HOME=str(home),
        CODEX_HOME=str(home / ".codex"),
        CLAUDE_CONFIG_DIR=str(home / ".claude"),
        DSH_HOME=str(home / ".dsh"),
        DSH_AGENTS_HOME=str(home / ".agents"),
        PATH=os.pathsep.join([bin_dir, *path] if loopx_on_path else path),
    )
    return env


@dataclass
class Sim:
    """A project driven by scripted hosts, one per agent."""

    root: Path
    protocol: str
    racing: bool = False
    """Agents tick at the same time: the codes of RACING are permitted too."""
    hosts: dict[str, Host] = field(default_factory=dict)
    worked: list[tuple[str, str]] = field(default_factory=list)
    """(agent, todo) in the order the agents began work on them."""
    steps: list[Step] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # -- installing ---------------------------------------------------------------------
    def install(self, agent: str, *, scope: str, loopx_on_path: bool = True) -> Host:
        """Install the protocol's facade for `agent` with the real CLI, into this agent's home."""
        home = self.root.parent / f"home-{agent}"
        host = Host(agent, home, host_env(home, loopx_on_path=loopx_on_path))
        self.hosts[agent] = host
        target = ["--target", str(self.root)] if scope == "project" else []
        args = ["workflow-skills", "--install", "--surface", self.protocol, "--scope", scope, *target]
        self.run(agent, [str(LOOPX_BIN)], [*args, "-g", GOAL, "-a", agent], record=False)
        return host

    # -- running commands -----------------------------------------------------------------
    def run(
        self,
        agent: str,
        loopx: list[str],
        args: list[str],
        *,
        stdin: str | None = None,
        timeout: float = 120,
        also: frozenset[int] = frozenset(),
        shell: str | None = None,
        record: bool = True,
    ) -> subprocess.CompletedProcess[str]:
        """Run one LoopX command line as `agent`'s host would; its exit code must be permitted."""
        key = command_key(args)
        allowed = ALLOWED[key] | also | (RACING.get(key, frozenset()) if self.racing else frozenset())
        host = self.hosts[agent]
        env = {**host.env, "CLAUDE_PROJECT_DIR": str(self.root)} if shell else host.env
        started = time.monotonic()
        argv = ["sh", "-c", shell] if shell else [*loopx, *args]
        try:
            proc = subprocess.run(
                argv,
                input=stdin,
                stdin=None if stdin is not None else subprocess.DEVNULL,
                capture_output=True,
                text=True,
                env=env,
                cwd=self.root,
                timeout=timeout,
                check=False,
            )
        except FileNotFoundError:  # what the agent's shell answers for a command not on PATH
            proc = subprocess.CompletedProcess(argv, 127, "", f"sh: {loopx[0]}: command not found")
        if record:
            with self._lock:
                self.steps.append(Step(agent, loopx, args, proc.returncode, started, time.monotonic()))
        assert proc.returncode in allowed, (
            f"{agent}: `loopx {shlex.join(args)}` exited {proc.returncode} (permitted: {sorted(allowed)}): "
            f"{proc.stderr.strip()[-400:]}"
        )
        return proc

    def observe(self, *args: str) -> dict[str, Any]:
        """A read-only look by the test itself (not by a host): JSON of `loopx ARGS` in the project."""
        agent = next(iter(self.hosts))
        return json.loads(self.run(agent, [str(LOOPX_BIN)], list(args), record=False).stdout)

    def should_run(self, agent: str) -> dict[str, Any]:
        """The packet, as the test sees it."""
        return self.observe("quota", "should-run", "--goal-id", GOAL, "--agent-id", agent)

    # -- the stand-in agent -------------------------------------------------------------------
    def work(self, agent: str, todo: str) -> None:
        """The stand-in agent's work: a file per todo."""
        path = self.root / "src" / f"{todo}.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"# written by {agent}\ndef {todo}():\n    return {todo!r}\n")
        with self._lock:
            self.worked.append((agent, todo))

    def execute(
        self,
        agent: str,
        loopx: list[str],
        actions: list[str],
        instructions: str,
        *,
        stop_after: str | None = None,
    ) -> bool:
        """Run the handed actions in order as the agent would; False at a refusal or a 'crash'.

        The agent adds `--no-follow-up --turn-key K` to `todo complete` only when the
        instructions ask for that closeout, and completes without it when LoopX refuses the
        closeout (exit 18: other todos still open). On a replan turn it has no next step to
        add: it takes the packet's other branch and stops the goal.
        """
        if any(shlex.split(a)[1:4] == ["turn", "begin", "--replan"] for a in actions):
            assert "stop the goal" in instructions, instructions
            self.run(agent, loopx, ["goal", "stop", "--goal-id", GOAL])
            return True
        todo = key = None
        for action in actions:
            words = [_fill(w, todo) for w in shlex.split(action)]
            assert words[0] == "loopx", action
            args = words[1:]
            if "--turn-key" in args:
                key = args[args.index("--turn-key") + 1]
            if args[:2] == ["todo", "complete"] and key and "--no-follow-up" in instructions:
                closeout = [*args, "--no-follow-up", "--turn-key", key]
                proc = self.run(agent, loopx, closeout, also=frozenset({CLOSEOUT_REFUSED}))
                if proc.returncode == CLOSEOUT_REFUSED:
                    proc = self.run(agent, loopx, args)
            else:
                proc = self.run(agent, loopx, args)
            if proc.returncode != 0:
                return False  # a permitted refusal: the agent stops and reports it
            if args[:2] == ["turn", "begin"]:
                todo = json.loads(proc.stdout).get("todo_id")
                if todo:
                    self.work(agent, todo)
            if stop_after and args[0] == stop_after:
                return False  # the host dies here
        return True

    # -- what the ledger and the store say (read from the files, not through LoopX) ----------------
    def _goal(self) -> Path:
        return self.root / ".loopx" / "goals" / GOAL

    def spends(self) -> list[dict[str, Any]]:
        """Every spend event of the goal's ledger."""
        path = self._goal() / "events.jsonl"
        lines = path.read_text().splitlines() if path.exists() else []
        return [e for e in map(json.loads, lines) if e["kind"] == "spend"]

    def journals(self) -> list[dict[str, Any]]:
        """Every turn journal of the goal."""
        return [json.loads(p.read_text()) for p in sorted((self._goal() / "turns").glob("*.json"))]

    def todos(self) -> dict[str, str]:
        """todo id -> status."""
        state = json.loads((self._goal() / "state.json").read_text())
        return {t["todo_id"]: t["status"] for t in state["todos"]}

    def runs(self) -> list[dict[str, Any]]:
        """The run index."""
        path = self._goal() / "runs" / "index.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _fill(word: str, todo: str | None) -> str:
    return (
        word.replace("<summary>", f"wrote src/{todo}.py")
        .replace("<evidence>", "python -m py_compile ok")
        .replace("<next step>", "next")
    )


# -- Claude Code ---------------------------------------------------------------------------------
def claude_settings(sim: Sim, host: Host) -> list[Path]:
    """The settings files Claude Code reads, in its order: user, project, project-local."""
    return [
        host.claude_dir / "settings.json",
        sim.root / ".claude/settings.json",
        sim.root / ".claude/settings.local.json",
    ]


def _claude_event(sim: Sim, host: Host, name: str, **fields: Any) -> str:
    assert host.session is not None
    transcript = host.claude_dir / "projects" / str(sim.root).replace("/", "-") / f"{host.session}.jsonl"
    return json.dumps(
        {
            "session_id": host.session,
            "transcript_path": str(transcript),
            "cwd": str(sim.root),
            "hook_event_name": name,
            **fields,
        }
    )


def _start_session(sim: Sim, host: Host) -> None:
    host.session, host.blocked = str(uuid.uuid4()), False
    transcript = host.claude_dir / "projects" / str(sim.root).replace("/", "-") / f"{host.session}.jsonl"
    transcript.parent.mkdir(parents=True, exist_ok=True)
    transcript.write_text(json.dumps({"type": "user", "sessionId": host.session}) + "\n")
    for hook in facades.claude_settings_hooks(claude_settings(sim, host), "SessionStart"):
        event = _claude_event(sim, host, "SessionStart", source="startup")
        proc = _claude_hook(sim, host, hook, event)
        assert proc.stdout.strip(), "the SessionStart hook gave Claude no context"


def _claude_hook(
    sim: Sim, host: Host, hook: facades.HookCommand, event: str
) -> subprocess.CompletedProcess[str]:
    words = shlex.split(hook.command)
    at = words.index("hook")  # the words after the LoopX command, for the exit-code table
    return sim.run(
        host.agent, words[:at], words[at:], stdin=event, timeout=hook.timeout or 600, shell=hook.command
    )


def claude_tick(sim: Sim, agent: str, **kw: Any) -> bool:
    """One Stop event: Claude runs every installed Stop hook; on block the agent obeys the reason."""
    host = sim.hosts[agent]
    stops = facades.claude_settings_hooks(claude_settings(sim, host), "Stop")
    assert stops, "no Stop hook is installed in the settings Claude Code reads"
    if host.session is None:
        _start_session(sim, host)
    event = _claude_event(sim, host, "Stop", stop_hook_active=host.blocked)
    reasons = []
    for hook in stops:
        answer = _claude_hook(sim, host, hook, event).stdout.strip()
        if answer:
            decision = facades.strict_json(answer)
            assert set(decision) <= {"decision", "reason"} and decision["decision"] == "block", decision
            assert isinstance(decision["reason"], str) and decision["reason"], decision
            reasons.append(decision["reason"])
    host.blocked = bool(reasons)
    if not reasons:
        return False  # Claude stops and waits for the user
    reason = "\n".join(reasons)
    loopx = facades.loopx_command_named(reason)
    if not sim.execute(agent, loopx, facades.numbered_actions(reason), reason, **kw) and kw.get("stop_after"):
        host.session = None  # the host died: the next Stop comes from a new session
    return True


# -- Codex App ------------------------------------------------------------------------------------
def codex_automation(sim: Sim, host: Host) -> tuple[Path, dict[str, Any]]:
    """The installed heartbeat automation working in this project."""
    found = [(p, a) for p, a in facades.codex_automations(host.codex_home) if str(sim.root) in a["cwds"]]
    assert len(found) == 1, f"{len(found)} automations work in this project"
    return found[0]


def codex_set_automation(path: Path, **keys: Any) -> None:
    """What the App's own automation tool does: change host-owned keys (rrule, status, updated_at)."""
    import tomlkit

    document = tomlkit.parse(path.read_text())
    for name, value in {**keys, "updated_at": int(time.time() * 1000)}.items():
        document[name] = value
    path.write_text(tomlkit.dumps(document))


def codex_tick(sim: Sim, agent: str, *, fail_update: str | None = None, **kw: Any) -> bool:
    """One heartbeat: the agent follows the installed automation's prompt, step by step."""
    host = sim.hosts[agent]
    path, automation = codex_automation(sim, host)
    if automation["status"] != "ACTIVE":
        return False  # the App does not fire a paused automation
    prompt = facades.HeartbeatPrompt.parse(automation["prompt"])
    loopx, args = prompt.loopx, prompt.should_run[len(prompt.loopx) :]
    packet = json.loads(sim.run(agent, loopx, args).stdout)
    ran = packet["should_run"] is True
    if ran:
        actions = facades.resolve(packet, prompt.actions_path)
        alive = sim.execute(agent, loopx, actions, json.dumps(packet), **kw)
        if not alive and kw.get("stop_after"):
            return True  # the host died before the scheduler step
    rrule = facades.resolve(packet, prompt.rrule_path)
    if rrule != automation["rrule"] or (rrule is None and automation["status"] == "ACTIVE"):
        if fail_update is not None:
            failure = [
                w.replace("<error>", fail_update) for w in facades.resolve(packet, prompt.failure_path)
            ]
            sim.run(agent, loopx, failure)
        else:
            codex_set_automation(path, **({"status": "PAUSED"} if rrule is None else {"rrule": rrule}))
            sim.run(agent, loopx, list(facades.resolve(packet, prompt.ack_path)))
    return ran


def codex_owner_resumes(sim: Sim, agent: str) -> None:
    """The owner switches a paused automation back on in the App."""
    path, _ = codex_automation(sim, sim.hosts[agent])
    codex_set_automation(path, status="ACTIVE")


# -- DSH --------------------------------------------------------------------------------------------
DSH_HARNESS = """
import { pathToFileURL } from "node:url";
const [modulesJson, cwd] = process.argv.slice(2);
const listeners = {}, commands = {}, warnings = [];
const ctx = {
  on: (event, fn) => { listeners[event] = fn; },
  effect: (fn) => { const it = fn(); let step = it.next(); while (!step.done) step = it.next(step.value); },
  commands: { register: (command) => { commands[command.name] = command; return () => {}; } },
  logger: { warn: (message) => warnings.push(String(message)) },
};
for (const [id, file] of JSON.parse(modulesJson)) {
  const module = await import(pathToFileURL(file));
  if (module.name !== id) throw new Error(`module ${file} is named ${module.name}, its row says ${id}`);
  if (!Array.isArray(module.inject) || typeof module.apply !== "function") throw new Error(`${id}: no inject/apply`);
  module.apply(ctx);
}
const agent = { session: { header: { cwd } }, steered: [], steer(m) { this.steered.push(m); } };
await listeners["agent/turn-stopping"]({ agent, turn: 1, signal: new AbortController().signal });
console.log(JSON.stringify({ steered: agent.steered.map((m) => m.content[0].text), warnings, commands: Object.keys(commands) }));
"""


def dsh_tick(sim: Sim, agent: str, **kw: Any) -> bool:
    """One turn boundary: the installed package's modules run under Node 22; the agent obeys the steering."""
    host = sim.hosts[agent]
    node = hostclis.NODE22 / "node"
    assert node.exists(), "Node 22 is missing: run scripts/install-hosts.sh"
    packages = facades.dsh_packages(sim.root / ".dsh" / "plugins", Path(host.env["DSH_HOME"]) / "plugins")
    assert len(packages) == 1, packages
    modules = [(row, str(path)) for row, path in facades.dsh_modules(packages[0])]
    harness = sim.root.parent / "dsh-harness.mjs"
    harness.write_text(DSH_HARNESS)
    proc = subprocess.run(
        [str(node), str(harness), json.dumps(modules), str(sim.root)],
        capture_output=True,
        text=True,
        env=host.env,
        cwd=sim.root,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout.strip().splitlines()[-1])
    assert answer["warnings"] == [], answer["warnings"]  # should-run exited non-zero, or failed
    assert "loopx" in answer["commands"], answer
    if not answer["steered"]:
        return False
    text = answer["steered"][0]
    sim.execute(agent, facades.loopx_command_named(text), facades.numbered_actions(text), text, **kw)
    return True


TICKS = {"codex-app": codex_tick, "claude-code": claude_tick, "dsh": dsh_tick}
