"""Every generated facade file means what its host reads, not only what the snapshot says.

Each host x scope x layout case `loopx hosts list` offers is installed with the real CLI twice:
into `--target` with `loopx` on PATH (the files say `loopx`), and into the homes and project the
host really reads with `loopx` off PATH (the files name its absolute path). Every file is parsed
by its kind with a strict parser and checked for the keys its host reads, and every command a
facade holds (hooks, MCP server, skill and prompt commands, the DSH modules' calls) is run for
real against a project, so a renamed command, flag, hook or packet field fails here.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shlex
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests import facades, hostclis
from tests.builders import build_project
from tests.conftest import LOOPX_BIN
from tests.hostsim import DSH_HARNESS, host_env

GOAL, AGENT = "demo", "builder"
KEBAB = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
SEMVER = re.compile(r"\d+\.\d+\.\d+([-+][0-9A-Za-z.-]+)?")
CLAUDE_EVENTS = {"SessionStart", "UserPromptSubmit", "Stop", "SubagentStop", "PreToolUse", "PostToolUse"}


def _hosts() -> list[dict[str, Any]]:
    proc = subprocess.run(
        [str(LOOPX_BIN), "hosts", "list", "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return json.loads(proc.stdout)["hosts"]


HOSTS = _hosts()
COMBOS = [(h["name"], scope, layout) for h in HOSTS for scope in h["scopes"] for layout in h["layouts"]]
VARIANTS = ["target", "home"]


@dataclass
class Installation:
    """One install of one case, and where its files went."""

    host: str
    scope: str
    layout: str
    variant: str
    project: Path
    home: Path
    target: Path | None
    env: dict[str, str]
    code: int
    stderr: str
    loopx: list[str] = field(default_factory=list)

    @property
    def files(self) -> list[Path]:
        """Every facade file written (the target, or the project and the homes)."""
        bases = [self.target] if self.target else [self.project, self.home]
        return facades.installed_files(*bases)

    def rel(self, path: Path) -> str:
        """`path` relative to its base, for messages."""
        for base in (self.target, self.project, self.home):
            if base is not None and path.is_relative_to(base):
                return str(path.relative_to(base))
        return path.name

    def run(
        self, argv: list[str], stdin: str | None = None, *, shell: bool = False
    ) -> subprocess.CompletedProcess[str]:
        """Run a facade's command in the project, as its host would."""
        return subprocess.run(
            ["sh", "-c", shlex.join(argv)] if shell else argv,
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            capture_output=True,
            text=True,
            env={**self.env, "CLAUDE_PROJECT_DIR": str(self.project)},
            cwd=self.project,
            timeout=120,
            check=False,
        )


@pytest.fixture(scope="module")
def install(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Callable[[tuple[str, str, str], str], Installation]]:
    """Install a case once per module (a function: (host, scope, layout), variant -> Installation)."""
    done: dict[tuple[Any, ...], Installation] = {}

    def get(combo: tuple[str, str, str], variant: str) -> Installation:
        key = (*combo, variant)
        if key not in done:
            base = tmp_path_factory.mktemp("-".join(key))
            project = base / "project"
            build_project(project, goal=GOAL, agents=(AGENT,), todo_count=1)
            on_path = variant == "target"
            env = host_env(base / "home", loopx_on_path=on_path)
            target = base / "target" if variant == "target" else None
            host, scope, layout = combo
            args = ["workflow-skills", "--install", "--surface", host, "--scope", scope, "--layout", layout]
            args += ["--target", str(target)] if target else []
            proc = subprocess.run(
                [str(LOOPX_BIN), *args, "-g", GOAL, "-a", AGENT],
                capture_output=True,
                text=True,
                env=env,
                cwd=project,
                timeout=120,
                check=False,
                stdin=subprocess.DEVNULL,
            )
            loopx = ["loopx"] if on_path else [str(LOOPX_BIN)]
            done[key] = Installation(
                host,
                scope,
                layout,
                variant,
                project,
                base / "home",
                target,
                env,
                proc.returncode,
                proc.stderr,
                loopx,
            )
        return done[key]

    yield get


def installed(
    install: Callable[..., Installation], combo: tuple[str, str, str], variant: str
) -> Installation | None:
    """The case installed, or None when the CLI refuses it (in one line, writing nothing)."""
    inst = install(combo, variant)
    if inst.code == 2 and "has no" in inst.stderr:
        assert inst.stderr.count("\n") == 1 and inst.stderr.startswith("loopx: error:"), inst.stderr
        assert "Traceback" not in inst.stderr and str(inst.home) not in inst.stderr
        assert inst.files == [], "a refused install wrote files"
        return None
    assert inst.code == 0, inst.stderr
    return inst


CASES = [pytest.param(c, v, id="-".join((*c, v))) for c in COMBOS for v in VARIANTS]


def test_every_listed_scope_and_layout_installs_somewhere(install: Callable[..., Installation]) -> None:
    """A case refused is fine; a scope or layout `hosts list` offers that never installs is not."""
    for host in HOSTS:
        name = host["name"]
        for scope in host["scopes"]:
            assert install((name, scope, "default"), "target").code == 0, (name, scope)
        for layout in host["layouts"]:
            assert any(install((name, s, layout), "target").code == 0 for s in host["scopes"]), (name, layout)


# -- the checkers: one per kind of file a host reads ------------------------------------------------
@dataclass
class Commands:
    """What a facade asks its host or agent to run, gathered while its files are checked."""

    run: list[list[str]] = field(default_factory=list)
    """Commands run for real in the project (read-only or harmless): exit 0."""
    help: list[list[str]] = field(default_factory=list)
    """Commands checked with --help (they would change the installation): exit 0."""
    mcp: list[list[str]] = field(default_factory=list)
    hooks: list[tuple[str, str]] = field(default_factory=list)
    """(event, shell command line)."""
    prompts: list[str] = field(default_factory=list)
    dsh_packages: list[Path] = field(default_factory=list)


def _loopx_words(inst: Installation, words: list[str], where: str) -> None:
    assert words[: len(inst.loopx)] == inst.loopx, f"{where}: {shlex.join(words)} is not run by {inst.loopx}"


def _mcp_servers(inst: Installation, servers: Any, where: str, cmds: Commands, *, typed: bool) -> None:
    assert isinstance(servers, dict) and "loopx" in servers, where
    server = servers["loopx"]
    allowed = (
        {"type", "command", "args", "env"}
        if typed
        else {"command", "args", "env", "cwd", "startup_timeout_sec", "tool_timeout_sec", "enabled"}
    )
    assert set(server) <= allowed and {"command", "args"} <= set(server), (where, server)
    if "type" in server:
        assert server["type"] == "stdio", where
    assert isinstance(server["command"], str) and isinstance(server["args"], list), where
    assert all(isinstance(a, str) for a in server["args"]) and isinstance(server.get("env", {}), dict), where
    argv = [server["command"], *server["args"]]
    _loopx_words(inst, argv, where)
    assert argv[len(inst.loopx) :] == ["mcp", "serve"], where
    for key in ("startup_timeout_sec", "tool_timeout_sec"):
        if key in server:
            assert isinstance(server[key], int | float) and 0 < server[key] <= 600, where
    cmds.mcp.append(argv)


def check_mcp_json(inst: Installation, path: Path, data: Any, cmds: Commands) -> None:
    """`.mcp.json` / `.claude.json`: `mcpServers.loopx` runs `loopx mcp serve` over stdio."""
    assert set(data) == {"mcpServers"}, data
    _mcp_servers(inst, data["mcpServers"], inst.rel(path), cmds, typed=True)


def check_claude_hooks(inst: Installation, path: Path, data: Any, cmds: Commands) -> None:
    """settings.json / hooks/hooks.json: `{"type": "command", "command": "loopx hook ..."}` entries."""
    assert set(data) == {"hooks"} and set(data["hooks"]) <= CLAUDE_EVENTS, data
    assert {"Stop", "SessionStart"} <= set(data["hooks"]), data["hooks"].keys()
    for event, entries in data["hooks"].items():
        assert isinstance(entries, list) and entries, event
        for entry in entries:
            assert set(entry) <= {"matcher", "hooks"} and isinstance(entry["hooks"], list), entry
            for hook in entry["hooks"]:
                assert set(hook) <= {"type", "command", "timeout"} and hook["type"] == "command", hook
                if "timeout" in hook:
                    assert isinstance(hook["timeout"], int) and 1 <= hook["timeout"] <= 600, hook
                words = shlex.split(hook["command"])
                _loopx_words(inst, words, f"{inst.rel(path)} {event}")
                rest = words[len(inst.loopx) :]
                assert rest[0] == "hook" and rest[2:] == ["--goal-id", GOAL, "--agent-id", AGENT], words
                cmds.hooks.append((event, hook["command"]))


def _defaults(inst: Installation, body: str, where: str) -> dict[str, str]:
    goal = re.search(r"\bG (?:defaults to|=) `([^`]+)`", body)
    agent = re.search(r"\bA (?:defaults to|=) `([^`]+)`", body)
    assert goal and agent, f"{where} does not say which goal and agent G and A default to"
    assert (goal.group(1), agent.group(1)) == (GOAL, AGENT), where
    return {"G": GOAL, "A": AGENT}


def _body_commands(inst: Installation, body: str, where: str, cmds: Commands) -> None:
    """The commands of a Markdown body: run for real; those in HTML comments (notes to the user) by --help."""
    notes = re.findall(r"<!--(.*?)-->", body, re.S)
    for note in notes:
        for words in facades.backticked_commands(note, ["loopx"]):
            cmds.help.append([*inst.loopx, *words[1:]])
    text = re.sub(r"<!--.*?-->", "", body, flags=re.S)
    found = facades.backticked_commands(text, inst.loopx)
    assert found, f"{where} holds no LoopX command"
    names = _defaults(inst, text, where)
    for words in found:
        cmds.run.append([names.get(w, w) for w in words])


def check_skill(inst: Installation, path: Path, data: Any, cmds: Commands) -> None:
    """SKILL.md: front matter `name` (kebab-case, its folder) and a one-line `description`."""
    meta, body = data
    where = inst.rel(path)
    assert meta is not None, f"{where} has no front matter"
    codex_rules = inst.host != "claude-code"  # .agents/skills is read by Codex and DSH
    allowed = (
        {"name", "description"}
        if codex_rules
        else {
            "name",
            "description",
            "argument-hint",
            "allowed-tools",
            "model",
            "disable-model-invocation",
            "user-invocable",
        }
    )
    assert set(meta) <= allowed and {"name", "description"} <= set(meta), (where, meta)
    name, description = meta["name"], meta["description"]
    assert isinstance(name, str) and KEBAB.fullmatch(name) and name == path.parent.name, where
    assert isinstance(description, str) and description.strip() and "\n" not in description, where
    assert len(name) <= (100 if codex_rules else 64), where
    assert len(description) <= (500 if codex_rules else 1024), where
    if "argument-hint" in meta:
        assert isinstance(meta["argument-hint"], str), where
    # packets say `loopx ...`: the skill must say how to run it when that is not on PATH
    assert facades.loopx_command_named(body) == inst.loopx, f"{where} does not name the LoopX command"
    _body_commands(inst, body, where, cmds)


def check_claude_command(inst: Installation, path: Path, data: Any, cmds: Commands) -> None:
    """commands/*.md: `description`, and `allowed-tools` granting exactly the LoopX command."""
    meta, body = data
    where = inst.rel(path)
    assert meta is not None and set(meta) <= {"description", "argument-hint", "allowed-tools", "model"}, where
    assert isinstance(meta.get("description"), str) and "\n" not in meta["description"], where
    if "allowed-tools" in meta:
        granted = re.fullmatch(r"Bash\((.+):\*\)", meta["allowed-tools"])
        assert granted and shlex.split(granted.group(1)) == inst.loopx, (where, meta["allowed-tools"])
    assert KEBAB.fullmatch(path.stem), where
    _body_commands(inst, body, where, cmds)


def check_openai_yaml(inst: Installation, path: Path, data: Any, cmds: Commands) -> None:
    """agents/openai.yaml: interface strings and the implicit-invocation policy."""
    where = inst.rel(path)
    assert isinstance(data, dict) and set(data) <= {"interface", "policy", "dependencies"}, where
    interface = data["interface"]
    assert set(interface) <= {
        "display_name",
        "short_description",
        "default_prompt",
        "icon_small",
        "icon_large",
        "brand_color",
    }
    for key in ("display_name", "short_description", "default_prompt"):
        assert isinstance(interface[key], str) and interface[key].strip() and "\n" not in interface[key], (
            where,
            key,
        )
    skill = facades.front_matter((path.parent.parent / "SKILL.md").read_text())[0] or {}
    assert f"${skill.get('name')}" in interface["default_prompt"], "the default prompt invokes another skill"
    assert GOAL in interface["default_prompt"] and AGENT in interface["default_prompt"]
    assert set(data.get("policy", {})) <= {"allow_implicit_invocation"}
    assert isinstance(data["policy"]["allow_implicit_invocation"], bool)


def check_codex_config(inst: Installation, path: Path, data: Any, cmds: Commands) -> None:
    """config.toml: `[mcp_servers.loopx]` in Codex's keys."""
    assert set(data) == {"mcp_servers"}, data
    _mcp_servers(inst, data["mcp_servers"], inst.rel(path), cmds, typed=False)


AUTOMATION_KEYS = {
    "version",
    "id",
    "name",
    "kind",
    "prompt",
    "status",
    "rrule",
    "cwds",
    "created_at",
    "updated_at",
}
AUTOMATION_OPTIONAL = {"model", "reasoning_effort", "execution_environment", "target_thread_id"}


def check_automation(inst: Installation, path: Path, data: Any, cmds: Commands) -> None:
    """automation.toml: the keys the App reads, of the types it writes itself."""
    where = inst.rel(path)
    assert AUTOMATION_KEYS <= set(data) <= AUTOMATION_KEYS | AUTOMATION_OPTIONAL, (where, sorted(data))
    assert data["version"] == 1 and data["id"] == path.parent.name == f"loopx-{GOAL}-{AGENT}", where
    assert isinstance(data["name"], str) and GOAL in data["name"] and AGENT in data["name"], where
    assert data["kind"] in ("cron", "heartbeat") and data["status"] in ("ACTIVE", "PAUSED"), where
    assert re.fullmatch(r"FREQ=(MINUTELY|HOURLY|DAILY);INTERVAL=[1-9][0-9]*", data["rrule"]), where
    cwds = data["cwds"]
    assert (
        isinstance(cwds, list) and len(cwds) == 1 and Path(cwds[0]).is_absolute() and Path(cwds[0]).is_dir()
    )
    if inst.variant == "home":  # with --target the folder is the target: see the xfail test below
        assert cwds == [str(inst.project)], where
    assert data.get("execution_environment", "local") == "local", where
    for key in ("created_at", "updated_at"):
        assert isinstance(data[key], int) and 1_600_000_000_000 < data[key] < 4_000_000_000_000, (where, key)
    assert data["created_at"] <= data["updated_at"], where
    assert isinstance(data["prompt"], str), where
    cmds.prompts.append(data["prompt"])


def check_agents_md(inst: Installation, path: Path, data: Any, cmds: Commands) -> None:
    """AGENTS.md: LoopX's marked block, pointing at a skill that is installed."""
    meta, body = data
    assert meta is None
    block = re.search(rf"<!-- loopx:begin {inst.host} -->\n(.*?)<!-- loopx:end {inst.host} -->\n", body, re.S)
    assert block, "no LoopX block"
    for named in re.findall(r"`(\.agents/skills/[^`]+)`", block.group(1)):
        assert (path.parent / named).is_file(), named


def check_dsh_package(inst: Installation, path: Path, data: Any, cmds: Commands) -> None:
    """package.json: a DSH native plugin (`dsh.bundle.patch`), whose exports and files exist."""
    where = inst.rel(path)
    assert data["name"] == path.parent.name and KEBAB.fullmatch(data["name"]), where
    assert SEMVER.fullmatch(data["version"]) and data["type"] == "module", where
    patch = data["dsh"]["bundle"]["patch"]
    assert set(data["dsh"]) == {"bundle"} and set(data["dsh"]["bundle"]) == {"patch"}, where
    assert patch.startswith("./") and (path.parent / patch).is_file(), where
    for name, target in data["exports"].items():
        assert name.startswith("./") and (path.parent / target).is_file(), (where, name)
    for pattern in data.get("files", []):
        assert list(path.parent.glob(pattern)), (where, pattern)
    cmds.dsh_packages.append(path.parent)


def check_cordis_patch(inst: Installation, path: Path, data: Any, cmds: Commands) -> None:
    """cordis.patch.yml: loader rows naming modules of this package that exist."""
    assert isinstance(data, list) and data and all(set(step) == {"insert"} for step in data), data
    rows = [row for step in data for row in step["insert"]]
    assert all(set(row) == {"id", "name"} and KEBAB.fullmatch(row["id"]) for row in rows), rows
    assert len({row["id"] for row in rows}) == len(rows)
    modules = facades.dsh_modules(path.parent)
    assert len(modules) == len(rows) and all(file.is_file() for _, file in modules), modules
    for row_id, file in modules:
        text = file.read_text()
        assert f'export const name = "{row_id}";' in text and "export function apply(ctx)" in text, file.name


def check_dsh_js(inst: Installation, path: Path, data: Any, cmds: Commands) -> None:
    """lib/*.js: generated, and the LoopX command, goal and agent baked in as installed."""
    assert data.startswith("// Generated by LoopX"), inst.rel(path)
    if "export const LOOPX = " in data:
        baked = re.search(r'^export const LOOPX = (".*");$', data, re.M)
        assert baked and [json.loads(baked.group(1))] == inst.loopx, inst.rel(path)
        assert f'export const GOAL_ID = "{GOAL}";' in data and f'export const AGENT_ID = "{AGENT}";' in data


def check_plugin_json(inst: Installation, path: Path, data: Any, cmds: Commands) -> None:
    """.claude-plugin/plugin.json beside the bundle's skills, commands, hooks and MCP config."""
    assert path.parent.name == ".claude-plugin"
    assert set(data) <= {
        "name",
        "version",
        "description",
        "author",
        "homepage",
        "repository",
        "license",
        "keywords",
    }
    assert KEBAB.fullmatch(data["name"]) and SEMVER.fullmatch(data["version"]), data
    assert isinstance(data["description"], str) and isinstance(data["author"]["name"], str), data
    root = path.parent.parent
    assert (root / "hooks/hooks.json").is_file() and (root / ".mcp.json").is_file()
    assert list(root.glob("skills/*/SKILL.md")) and list(root.glob("commands/*.md"))


def check_marketplace(inst: Installation, path: Path, data: Any, cmds: Commands) -> None:
    """.claude-plugin/marketplace.json: each plugin's source holds that plugin at that version."""
    assert (
        {"name", "owner", "plugins"} <= set(data) <= {"name", "owner", "plugins", "description", "metadata"}
    )
    assert KEBAB.fullmatch(data["name"]) and isinstance(data["owner"]["name"], str)
    for plugin in data["plugins"]:
        assert {"name", "source", "description", "version"} <= set(plugin), plugin
        assert plugin["source"].startswith("./"), plugin
        manifest = path.parent.parent / plugin["source"] / ".claude-plugin/plugin.json"
        own = facades.strict_json(manifest.read_text())
        assert (own["name"], own["version"]) == (plugin["name"], plugin["version"]), plugin


def role(path: Path) -> Callable[[Installation, Path, Any, Commands], None] | None:
    """The checker for a generated file, by what its host calls it."""
    name = path.name
    if name == "SKILL.md":
        return check_skill
    if path.parent.name == "commands" and path.suffix == ".md":
        return check_claude_command
    by_name = {
        ".mcp.json": check_mcp_json,
        ".claude.json": check_mcp_json,
        "settings.json": check_claude_hooks,
        "openai.yaml": check_openai_yaml,
        "config.toml": check_codex_config,
        "automation.toml": check_automation,
        "AGENTS.md": check_agents_md,
        "package.json": check_dsh_package,
        "cordis.patch.yml": check_cordis_patch,
        "plugin.json": check_plugin_json,
        "marketplace.json": check_marketplace,
    }
    if name == "hooks.json" and path.parent.name == "hooks":
        return check_claude_hooks
    if path.suffix == ".js" and path.parent.name == "lib":
        return check_dsh_js
    return by_name.get(name)


def checked(inst: Installation) -> Commands:
    """Parse and check every file of an installation; the commands they hold."""
    cmds = Commands()
    files = inst.files
    assert files
    for path in files:
        checker = role(path)
        assert checker is not None, (
            f"no checker for {inst.rel(path)}: add one to tests/test_facade_semantics.py"
        )
        try:
            data = facades.parse(path)
        except facades.FacadeError as bad:
            raise AssertionError(f"{inst.rel(path)}: {bad}") from None
        checker(inst, path, data, cmds)
    return cmds


@pytest.mark.parametrize(("combo", "variant"), CASES)
def test_every_generated_file_parses_strictly_and_has_the_keys_its_host_reads(
    install: Callable[..., Installation], combo: tuple[str, str, str], variant: str
) -> None:
    inst = installed(install, combo, variant)
    if inst is None:
        return
    cmds = checked(inst)
    assert cmds.run or cmds.mcp or cmds.hooks or cmds.prompts or cmds.dsh_packages
    if inst.variant == "home" and inst.scope == "user":  # the user scope wrote nothing into the project
        assert facades.installed_files(inst.project) == []
    manifests = [
        p for base in (inst.target, inst.project, inst.home) if base for p in base.glob(".loopx/facades.json")
    ]
    assert manifests, "no install manifest"
    for manifest in manifests:  # LoopX's own record is generated JSON too
        record = facades.strict_json(manifest.read_text())
        assert isinstance(record, dict) and isinstance(record.get("schema_version"), int), manifest


# -- the commands, run for real ---------------------------------------------------------------------
_MCP_SEEN: dict[tuple[str, ...], list[str]] = {}


def mcp_handshake(inst: Installation, argv: list[str]) -> list[str]:
    """Start the server as the host would, initialize, list tools, call should-run; its tool names."""
    key = tuple(argv)
    if key in _MCP_SEEN:
        return _MCP_SEEN[key]
    hello = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "host", "version": "0"},
    }
    call = {"name": "quota_should_run", "arguments": {"goal_id": GOAL, "agent_id": AGENT}}
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call},
    ]
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=inst.env,
        cwd=inst.project,
    )
    answers: dict[int, Any] = {}
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for message in lines:
            proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.flush()
            if "id" in message:
                while message["id"] not in answers:
                    line = proc.stdout.readline()
                    assert line, (
                        f"the MCP server closed its output: {proc.stderr.read() if proc.stderr else ''}"
                    )
                    answer = json.loads(line)
                    answers[answer.get("id")] = answer
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()
    assert answers[1]["result"]["serverInfo"]["name"], answers[1]
    tools = [tool["name"] for tool in answers[2]["result"]["tools"]]
    result = answers[3]["result"]
    assert result.get("isError") is not True, result
    packet = result.get("structuredContent") or json.loads(result["content"][0]["text"])
    packet = packet.get("result", packet)
    assert packet["goal_id"] == GOAL and packet["should_run"] is True, packet
    _MCP_SEEN[key] = tools
    return tools


def run_hook(inst: Installation, event: str, command: str) -> subprocess.CompletedProcess[str]:
    """A hook command run by the shell, with the event JSON Claude Code sends."""
    payload = {
        "session_id": "semantics",
        "transcript_path": str(inst.home / "transcript.jsonl"),
        "cwd": str(inst.project),
        "hook_event_name": event,
        **({"stop_hook_active": False} if event == "Stop" else {"source": "startup"}),
    }
    return subprocess.run(
        ["sh", "-c", command],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env={**inst.env, "CLAUDE_PROJECT_DIR": str(inst.project)},
        cwd=inst.project,
        timeout=120,
        check=False,
    )


def check_prompt(inst: Installation, prompt: str) -> None:
    """The automation prompt: its commands and packet fields live, and it is the CLI's own prompt."""
    parsed = facades.HeartbeatPrompt.parse(prompt)
    assert parsed.loopx == inst.loopx
    asked = inst.run(parsed.should_run)
    assert asked.returncode == 0, asked.stderr
    packet = json.loads(asked.stdout)
    assert packet["should_run"] is True and packet["surface"] == inst.host
    assert all(a.startswith("loopx ") for a in facades.resolve(packet, parsed.actions_path))
    assert facades.resolve(packet, parsed.rrule_path) is not None
    ack = facades.resolve(packet, parsed.ack_path)
    assert "<error>" in facades.resolve(packet, parsed.failure_path)
    failure = [
        w.replace("<error>", "the automation tool refused")
        for w in facades.resolve(packet, parsed.failure_path)
    ]
    for words in (ack, failure):
        done = inst.run([*parsed.loopx, *words])
        assert done.returncode == 0, (words, done.stderr)
    selectors = ["-g", GOAL, "-a", AGENT, "--surface", inst.host, "--loopx-command", shlex.join(inst.loopx)]
    shown = inst.run([*inst.loopx, "heartbeat-prompt", *selectors])
    assert shown.returncode == 0 and shown.stdout == prompt, shown.stderr


def check_dsh_modules(inst: Installation, package: Path) -> None:
    """The package's modules under Node 22: named as their rows, `/loopx` answers, the listener steers."""
    node = hostclis.NODE22 / "node"
    assert node.exists(), "Node 22 is missing: run scripts/install-hosts.sh"
    modules = [(row, str(file)) for row, file in facades.dsh_modules(package)]
    harness = inst.home.parent / "harness.mjs"
    harness.write_text(
        DSH_HARNESS.replace(
            "console.log(",
            'const shown = await commands["loopx"].handler({ rawInput: "", agent, signal: new AbortController().signal });\n'
            "console.log(JSON.stringify(shown));\nconsole.log(",
        )
    )
    proc = subprocess.run(
        [str(node), str(harness), json.dumps(modules), str(inst.project)],
        capture_output=True,
        text=True,
        env=inst.env,
        cwd=inst.project,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    *_, shown_line, answer_line = proc.stdout.strip().splitlines()
    shown, answer = json.loads(shown_line), json.loads(answer_line)
    assert shown["kind"] == "success" and shown["text"].startswith(f"# should-run: RUN (goal `{GOAL}`"), shown
    assert answer["warnings"] == [] and answer["commands"] == ["loopx"], answer
    assert len(answer["steered"]) == 1, answer
    steering = answer["steered"][0]
    assert facades.loopx_command_named(steering) == inst.loopx
    assert facades.numbered_actions(steering)[0].startswith(
        f"loopx turn begin --goal-id {GOAL} --agent-id {AGENT}"
    )


@pytest.mark.parametrize(("combo", "variant"), CASES)
def test_every_command_a_facade_holds_is_one_the_cli_accepts(
    install: Callable[..., Installation], combo: tuple[str, str, str], variant: str
) -> None:
    inst = installed(install, combo, variant)
    if inst is not None:
        exercise(inst)


def exercise(inst: Installation) -> None:
    """Check every file of `inst` and run every command they hold."""
    cmds = checked(inst)
    for argv in cmds.run:
        proc = inst.run(argv)
        assert proc.returncode == 0 and proc.stdout.strip(), (shlex.join(argv), proc.stderr)
    for argv in cmds.help:
        proc = inst.run([*argv, "--help"])
        assert proc.returncode == 0 and "Usage:" in proc.stdout, (shlex.join(argv), proc.stderr)
    for argv in cmds.mcp:
        assert "quota_should_run" in mcp_handshake(inst, argv)
    events = {event for event, _ in cmds.hooks}
    for event, command in cmds.hooks:
        proc = run_hook(inst, event, command)
        assert proc.returncode == 0, (event, proc.stderr)
        if event == "Stop":  # an open todo and quota left: the hook blocks with the next turn
            answer = facades.strict_json(proc.stdout)
            assert answer["decision"] == "block" and facades.numbered_actions(answer["reason"]), answer
        else:
            assert GOAL in proc.stdout and AGENT in proc.stdout, proc.stdout
    assert not cmds.hooks or events == {"Stop", "SessionStart"}
    for prompt in cmds.prompts:
        check_prompt(inst, prompt)
    for package in cmds.dsh_packages:
        check_dsh_modules(inst, package)


MUTATIONS = [
    ("claude-code", "project", "default", ".claude/settings.json", "claude-stop", "claude-stopped"),
    ("claude-code", "project", "default", ".claude/settings.json", '"type": "command"', '"type": "script"'),
    (
        "claude-code",
        "project",
        "default",
        ".claude/skills/loopx/SKILL.md",
        "should-run --goal-id",
        "should-run --goal",
    ),
    ("claude-code", "project", "default", ".claude/skills/loopx/SKILL.md", "name: loopx", "name: LoopX"),
    ("claude-code", "project", "default", ".claude/commands/loopx-status.md", "loopx status", "loopx state"),
    ("claude-code", "project", "default", ".mcp.json", '"serve"', '"start"'),
    ("claude-code", "project", "plugin", "plugins/loopx/hooks/hooks.json", "--agent-id", "--agent"),
    (
        "claude-code",
        "project",
        "plugin",
        ".claude-plugin/marketplace.json",
        '"version": "0.1.0"',
        '"version": "0.2.0"',
    ),
    (
        "codex-app",
        "user",
        "default",
        "automations/loopx-demo-builder/automation.toml",
        "--surface",
        "--surfaces",
    ),
    ("codex-app", "user", "default", "automations/loopx-demo-builder/automation.toml", "ack_hint", "ack"),
    (
        "codex-app",
        "user",
        "default",
        "automations/loopx-demo-builder/automation.toml",
        "rrule = ",
        "schedule = ",
    ),
    ("codex-app", "user", "default", ".agents/skills/loopx/agents/openai.yaml", "policy:", "interface:"),
    ("codex-app", "project", "default", ".codex/config.toml", '"mcp", "serve"', '"mcp", "serve", "--stdio"'),
    (
        "dsh",
        "project",
        "default",
        ".dsh/plugins/loopx-dsh/cordis.patch.yml",
        "loopx-dsh/command",
        "loopx-dsh/cmd",
    ),
    (
        "dsh",
        "project",
        "default",
        ".dsh/plugins/loopx-dsh/package.json",
        './cordis.patch.yml"\n',
        './patch.yml"\n',
    ),
    (
        "dsh",
        "project",
        "default",
        ".dsh/plugins/loopx-dsh/lib/loopx.js",
        '"--surface", "dsh"',
        '"--host", "dsh"',
    ),
]


@pytest.mark.parametrize(
    ("host", "scope", "layout", "rel", "old", "new"), MUTATIONS, ids=[f"{m[3]}:{m[4]}" for m in MUTATIONS]
)
def test_a_facade_changed_in_what_its_host_reads_fails_these_checks(
    install: Callable[..., Installation],
    tmp_path: Path,
    host: str,
    scope: str,
    layout: str,
    rel: str,
    old: str,
    new: str,
) -> None:
    inst = installed(install, (host, scope, layout), "target")
    assert inst is not None and inst.target is not None
    copy = tmp_path / "target"
    shutil.copytree(inst.target, copy, symlinks=True)
    path = copy / rel
    text = path.read_text()
    assert text.count(old) >= 1, (rel, old)
    path.write_text(text.replace(old, new))
    changed = dataclasses.replace(inst, target=copy)
    with pytest.raises((AssertionError, KeyError, facades.FacadeError)):
        exercise(changed)


def test_a_user_scope_automation_installed_with_a_target_runs_in_the_project(
    install: Callable[..., Installation],
) -> None:
    inst = installed(install, ("codex-app", "user", "default"), "target")
    assert inst is not None and inst.target is not None
    automation = facades.strict_toml(
        (inst.target / "automations/loopx-demo-builder/automation.toml").read_text()
    )
    assert automation["cwds"] == [str(inst.project)]


# -- the strict parsers refuse what a host's would ---------------------------------------------------------
@pytest.mark.parametrize(
    ("parser", "text"),
    [
        (facades.strict_json, '{"a": 1, "a": 2}'),
        (facades.strict_json, '{"a": NaN}'),
        (facades.strict_json, '{"a": Infinity}'),
        (facades.strict_json, '{"a": 1,}'),
        (facades.strict_toml, "a = 1\na = 2\n"),
        (facades.strict_toml, "[t]\n[t]\n"),
        (facades.strict_yaml, "a: 1\na: 2\n"),
        (facades.strict_yaml, "a:\n\tb: 1\n"),
        (facades.strict_yaml, "a: [1, 2]\n"),
        (facades.strict_yaml, 'a: "open\n'),
        (facades.strict_yaml, "a: 1\n  b: 2\n"),
        (facades.front_matter, "---\nname: x\n"),
        (facades.front_matter, "---\nname: x\nname: y\n---\nbody\n"),
    ],
)
def test_the_strict_parsers_refuse_what_a_host_would(parser: Callable[[str], Any], text: str) -> None:
    with pytest.raises(facades.FacadeError):
        parser(text)


def test_the_yaml_subset_reads_block_yaml_as_yaml_does() -> None:
    with pytest.raises(facades.FacadeError):  # a sequence, then a mapping at the same level
        facades.strict_yaml("- insert:\n    - id: a\nx:\n  y: true\n")
    text = (
        "# c\n- insert:\n    - id: a\n      name: 'it''s'\n\n    - id: b\n      name: \"p/b\"\n      n: 3\n"
    )
    expected = [{"insert": [{"id": "a", "name": "it's"}, {"id": "b", "name": "p/b", "n": 3}]}]
    assert facades.subset_yaml(text) == expected
    assert facades.strict_yaml(text) == expected  # and PyYAML, when installed, reads the same
