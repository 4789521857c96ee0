"""Codex App host: the loopx skill, the `[mcp_servers.loopx]` table and the heartbeat automation.

Project scope writes `.agents/skills/loopx/` and `.codex/config.toml`; user scope writes
`$CODEX_HOME/config.toml`, `~/.agents/skills/loopx/` and, when a goal and an agent are given,
`$CODEX_HOME/automations/<id>/automation.toml`. The App's private database is never written:
the heartbeat agent applies rrule changes with the App's own automation tool and acks them.
"""

from __future__ import annotations

import dataclasses
import re
import tomllib
from collections.abc import Callable
from importlib import resources
from typing import Any

from loopx_core.hosts.hookspecs import hookimpl
from loopx_core.hosts.jinja import render
from loopx_core.hosts.model import FacadeFile, Finding, HostSteps, HostSurface, RenderContext
from loopx_core.hosts.readback import front_matter, verify_against

SURFACE = HostSurface(
    name="codex-app",
    title="Codex App",
    template_root=resources.files("loopx_templates") / "codex-app",
    scopes=("project", "user"),
    layouts=("default",),
    home_env="CODEX_HOME",
    restart_notice="Restart Codex to load LoopX.",
)

SHARED_SURFACE = dataclasses.replace(SURFACE, template_root=resources.files("loopx_templates") / "shared")
"""The same surface over the shared templates (the `.agents` skill Codex and DSH both own)."""

MCP_KEYS: tuple[tuple[str, ...], ...] = (("mcp_servers", "loopx"),)
"""The table LoopX owns in `config.toml` (users' tool approvals below it are kept by the merge)."""
HOST_KEYS = ("rrule", "status", "updated_at")
"""Keys of automation.toml the App edits itself (the heartbeat applies rrule changes): the App's."""
TRUST = '[projects."<dir>"] trust_level = "trusted"'
SKILL_DIR = ".agents/skills/loopx"
_ID = re.compile(r"^[a-z0-9._-]+$")


def _render(template: str, context: RenderContext, **extra: Any) -> str:
    return render(SURFACE, template, context, **extra)


def _skill_files(context: RenderContext, base: str) -> list[FacadeFile]:
    skill = render(SHARED_SURFACE, "agents-skill/SKILL.md.j2", context)
    return [
        FacadeFile(f"{SKILL_DIR}/SKILL.md", skill, base=base, shared=True),
        FacadeFile(f"{SKILL_DIR}/agents/openai.yaml", _render("openai.yaml.j2", context), base=base),
    ]


def automation_id(context: RenderContext) -> str:
    """The heartbeat automation's id: `loopx-<goal>-<agent>`."""
    if not (context.goal_id and context.agent_id):
        raise ValueError("a codex-app heartbeat needs both a goal id and an agent id")
    for value in (context.goal_id, context.agent_id):
        if not _ID.match(value):
            raise ValueError(f"invalid id {value!r}: use a-z 0-9 . _ -")
    return f"loopx-{context.goal_id}-{context.agent_id}"


def heartbeat_prompt(context: RenderContext) -> str:
    """The heartbeat automation's prompt for the context's goal and agent (what `loopx heartbeat-prompt` prints)."""
    automation_id(context)  # validates the ids
    return _render("heartbeat-prompt.md.j2", context)


def render_files(context: RenderContext) -> list[FacadeFile]:
    """The facade files for `context.scope`; ValueError for an unsupported scope or layout."""
    if context.layout != "default":
        raise ValueError(f"codex-app has no {context.layout!r} layout")
    config = _render("config.toml.j2", context)
    if context.scope == "project":
        return [
            *_skill_files(context, "target"),
            FacadeFile(".codex/config.toml", config, merge="toml", owned_keys=MCP_KEYS),
            FacadeFile("AGENTS.md", _render("AGENTS.md.j2", context), merge="markdown"),
        ]
    if context.scope != "user":
        raise ValueError(f"codex-app has no {context.scope!r} scope")
    found = [FacadeFile("config.toml", config, base="codex_home", merge="toml", owned_keys=MCP_KEYS)]
    if context.goal_id and context.agent_id:
        ident = automation_id(context)
        automation = _render(
            "automation.toml.j2", context, automation_id=ident, prompt=heartbeat_prompt(context)
        )
        found.append(
            FacadeFile(
                f"automations/{ident}/automation.toml", automation, base="codex_home", host_keys=HOST_KEYS
            )
        )
    return [*found, *_skill_files(context, "home")]


def packet_hints(packet: dict[str, Any]) -> dict[str, Any]:
    """The rrule to apply and the CLI args that ack it (or report a failure); {} without a scheduler hint."""
    hint = packet.get("scheduler_hint")
    if not isinstance(hint, dict) or "recommended_rrule" not in hint:
        return {}
    rrule = hint["recommended_rrule"]
    ids = ["--goal-id", packet["goal_id"], "--agent-id", packet["agent_id"]]
    schedule = ["--pause"] if rrule is None else ["--rrule", rrule]
    if hint.get("fingerprint"):
        schedule += ["--fingerprint", hint["fingerprint"]]
    return {
        "ack_hint": {"cli_args": ["quota", "scheduler-ack", *ids, *schedule]},
        "failure_hint": {"cli_args": ["quota", "scheduler-fail", *ids, "--error", "<error>"]},
    }


def _yaml_keys(text: str) -> set[str]:
    # Enough for the flat two-level openai.yaml we write: `key:` at any indent.
    return {line.split(":", 1)[0].strip() for line in text.splitlines() if ":" in line and line.strip()}


def _check(expected: FacadeFile, text: str) -> list[str]:
    name = expected.path.rsplit("/", 1)[-1]
    if name == "SKILL.md":
        meta = front_matter(text)
        if meta is None:
            return ["no front matter"]
        problems = (
            [f"front matter name is {meta.get('name')!r}, expected 'loopx'"]
            if meta.get("name") != "loopx"
            else []
        )
        if not 0 < len(meta.get("description", "")) <= 500:
            problems.append("front matter description must be 1-500 characters")
        return problems
    if name == "AGENTS.md":
        begin, end = "<!-- loopx:begin codex-app -->", "<!-- loopx:end codex-app -->"
        start = text.find(begin)
        body = (
            text[start + len(begin) : text.find(end, start)].strip() if start >= 0 and end in text else None
        )
        return [] if body == expected.content.strip() else ["the LoopX block is missing or differs"]
    if name == "openai.yaml":
        missing = sorted(_yaml_keys(expected.content) - _yaml_keys(text))
        return [f"missing keys: {', '.join(missing)}"] if missing else []
    try:
        actual = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return [f"invalid TOML: {exc}"]
    wanted = tomllib.loads(expected.content)
    if name == "config.toml":
        servers = actual.get("mcp_servers")
        server = servers.get("loopx") if isinstance(servers, dict) else None
        if not isinstance(server, dict):
            return ["no [mcp_servers.loopx] table"]
        mine = wanted["mcp_servers"]["loopx"]
        return [
            f"mcp_servers.loopx.{k} is {server.get(k)!r}, expected {v!r}"
            for k, v in mine.items()
            if server.get(k) != v
        ]
    # automation.toml: the App may change rrule, status and updated_at; the rest is ours.
    return [
        f"{k} is {actual.get(k)!r}, expected {wanted[k]!r}"
        for k in ("version", "id", "kind", "prompt", "execution_environment", "cwds")
        if actual.get(k) != wanted[k]
    ]


def verify_files(context: RenderContext, installed: dict[str, str]) -> list[Finding]:
    """Read an installation back: every file present and parseable, the loopx server and automation sound."""
    return verify_against(render_files(context), installed, _check)


@hookimpl
def loopx_register_hosts(register: Callable[[HostSurface], None]) -> None:
    """Declare the codex-app surface."""
    register(SURFACE)


@hookimpl
def loopx_render_facade(host: str, context: RenderContext) -> list[FacadeFile] | None:
    """Codex App's facade files for the context's scope."""
    return render_files(context) if host == SURFACE.name else None


@hookimpl
def loopx_packet_hints(host: str, packet: dict[str, Any]) -> dict[str, Any] | None:
    """The scheduler hints for `scheduler_hint.codex_app`: rrule, ack and failure CLI args."""
    return packet_hints(packet) if host == SURFACE.name else None


@hookimpl
def loopx_verify_installation(
    host: str, context: RenderContext, files: dict[str, str]
) -> list[Finding] | None:
    """Findings for a codex-app installation (empty when sound); None for other hosts."""
    return verify_files(context, files) if host == SURFACE.name else None


@hookimpl
def loopx_heartbeat_prompt(host: str, context: RenderContext) -> str | None:
    """The automation's prompt for `loopx heartbeat-prompt`; None for other hosts."""
    return heartbeat_prompt(context) if host == SURFACE.name else None


def host_steps(operation: str, context: RenderContext) -> HostSteps:
    """Notes per operation and scope (the project trust entry lives in `$CODEX_HOME/config.toml`)."""
    heartbeat = bool(context.scope == "user" and context.goal_id and context.agent_id)
    if operation == "install":
        if context.scope == "project":
            return HostSteps(
                notes=(
                    "Restart Codex to load the LoopX skill and the MCP server in .codex/config.toml. Codex "
                    f"reads it only for a trusted project: {TRUST} in $CODEX_HOME/config.toml "
                    "(default ~/.codex/config.toml), <dir> being this project's folder.",
                )
            )
        extra = (
            f" and the heartbeat automation {automation_id(context)} (its rrule and status are the App's to change)"
            if heartbeat
            else ""
        )
        return HostSteps(
            notes=(
                f"Restart Codex to load the LoopX skill, the MCP server in $CODEX_HOME/config.toml{extra}.",
            )
        )
    if context.scope == "project":
        return HostSteps(
            notes=(
                "Restart Codex: the LoopX skill and MCP server are gone. The project's trust entry "
                f"({TRUST} in $CODEX_HOME/config.toml) is yours: LoopX leaves it.",
            )
        )
    return HostSteps(
        notes=(
            "Restart Codex: the LoopX skill, MCP server and automation files are gone; if the Codex App "
            "still lists a LoopX automation, delete it there (the App keeps its own copy).",
        )
    )


@hookimpl
def loopx_host_steps(host: str, operation: str, context: RenderContext) -> HostSteps | None:
    """What to do in Codex after an install or uninstall; None for other hosts."""
    return host_steps(operation, context) if host == SURFACE.name else None
