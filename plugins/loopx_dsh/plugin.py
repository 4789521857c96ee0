"""DSH host: the `loopx-dsh` native plugin package (the `/loopx` command, a turn-boundary listener) and the skill.

Project scope writes `.dsh/plugins/loopx-dsh/` and `.agents/skills/loopx/`; user scope writes
`$DSH_HOME/plugins/loopx-dsh/` and `$DSH_AGENTS_HOME/skills/loopx/`. DSH loads the package only
after `dsh plugin --profile web add -w link:<dir>` (the restart notice says so).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from importlib import resources
from typing import Any

from loopx_core.hosts.hookspecs import hookimpl
from loopx_core.hosts.jinja import render
from loopx_core.hosts.model import FacadeFile, Finding, HostSteps, HostSurface, RenderContext
from loopx_core.hosts.readback import verify_against

SURFACE = HostSurface(
    name="dsh",
    title="DSH (DeepSeek Harness)",
    template_root=resources.files("loopx_templates") / "dsh",
    scopes=("project", "user"),
    layouts=("default",),
    home_env="DSH_HOME",
    restart_notice="Load the loopx-dsh package into DSH, then restart it.",
)

SHARED_SURFACE = dataclasses.replace(SURFACE, template_root=resources.files("loopx_templates") / "shared")
"""The same surface over the shared templates (the `.agents` skill Codex and DSH both own)."""

PACKAGE = "loopx-dsh"
"""The npm package name; its modules load as `loopx-dsh/<module>`."""
MODULES = ("lib/loopx.js", "lib/command.js", "lib/turn-boundary.js")
"""The package's JavaScript files (command and turn-boundary are cordis modules, loopx.js their helper)."""
_SEMVER = re.compile(r"^(\d+)\.(\d+)\.(\d+)(.*)$")


def npm_version(version: str) -> str:
    """`version` as semver for package.json (`0.1.0.dev3+g1a` -> `0.1.0-dev3+g1a`); "0.0.0" when it has none."""
    match = _SEMVER.match(version)
    if not match:
        return "0.0.0"
    pre, _, local = match.group(4).partition("+")
    pre, local = (re.sub(r"[^0-9A-Za-z]+", ".", part).strip(".") for part in (pre, local))
    return ".".join(match.group(1, 2, 3)) + (f"-{pre}" if pre else "") + (f"+{local}" if local else "")


def _package_files(context: RenderContext, base: str, folder: str) -> list[FacadeFile]:
    def one(path: str, **extra: Any) -> FacadeFile:
        return FacadeFile(f"{folder}/{path}", render(SURFACE, f"{path}.j2", context, **extra), base=base)

    return [
        one("package.json", version=npm_version(context.loopx_version)),
        one("cordis.patch.yml"),
        *(one(module) for module in MODULES),
    ]


def render_files(context: RenderContext) -> list[FacadeFile]:
    """The facade files for `context.scope`; ValueError for an unsupported scope or layout."""
    if context.layout != "default":
        raise ValueError(f"dsh has no {context.layout!r} layout")
    skill = render(SHARED_SURFACE, "agents-skill/SKILL.md.j2", context)
    if context.scope == "project":
        return [
            FacadeFile(".agents/skills/loopx/SKILL.md", skill, shared=True),
            *_package_files(context, "target", f".dsh/plugins/{PACKAGE}"),
        ]
    if context.scope == "user":
        return [
            *_package_files(context, "dsh_home", f"plugins/{PACKAGE}"),
            FacadeFile("skills/loopx/SKILL.md", skill, base="dsh_agents_home", shared=True),
        ]
    raise ValueError(f"dsh has no {context.scope!r} scope")


def _skill_problems(text: str) -> list[str]:
    if not text.startswith("---\n") or "\n---\n" not in text[3:]:
        return ["no front matter"]
    head = text[4 : text.index("\n---\n", 3)].splitlines()
    return [] if "name: loopx" in head else ["front matter lacks `name: loopx`"]


def _package_problems(text: str) -> list[str]:
    try:
        package = json.loads(text)
    except ValueError as exc:
        return [f"invalid JSON: {exc}"]
    if not isinstance(package, dict):
        return ["not a JSON object"]
    problems = (
        [] if package.get("name") == PACKAGE else [f"name is {package.get('name')!r}, expected {PACKAGE!r}"]
    )
    bundle = package.get("dsh")
    bundle = bundle.get("bundle") if isinstance(bundle, dict) else None
    if not isinstance(bundle, dict) or bundle.get("patch") != "./cordis.patch.yml":
        problems.append("dsh.bundle.patch is not ./cordis.patch.yml")
    exports = package.get("exports")
    exports = exports if isinstance(exports, dict) else {}
    problems += [f"exports lack ./{m}" for m in ("command", "turn-boundary") if f"./{m}" not in exports]
    return problems


def _check(expected: FacadeFile, text: str) -> list[str]:
    name = expected.path.rsplit("/", 1)[-1]
    if name == "SKILL.md":
        return _skill_problems(text)
    if name == "package.json":
        return _package_problems(text)
    if name == "cordis.patch.yml":
        rows = [f"name: {PACKAGE}/{m}" for m in ("command", "turn-boundary")]
        return [f"no `{row}` row" for row in rows if row not in text]
    # Generated JavaScript carries the baked command, goal and agent: any difference is drift.
    return [] if text == expected.content else ["differs from the LoopX rendering (edited or stale)"]


def verify_files(context: RenderContext, installed: dict[str, str]) -> list[Finding]:
    """Read an installation back: the package, its patch rows, its modules and the skill."""
    return verify_against(render_files(context), installed, _check)


@hookimpl
def loopx_register_hosts(register: Callable[[HostSurface], None]) -> None:
    """Declare the dsh surface."""
    register(SURFACE)


@hookimpl
def loopx_render_facade(host: str, context: RenderContext) -> list[FacadeFile] | None:
    """DSH's facade files for the context's scope."""
    return render_files(context) if host == SURFACE.name else None


@hookimpl
def loopx_packet_hints(host: str, packet: dict[str, Any]) -> dict[str, Any] | None:
    """No hints: the turn-boundary listener reads the packet itself and DSH has no scheduler to ack (always None)."""
    return None


@hookimpl
def loopx_verify_installation(
    host: str, context: RenderContext, files: dict[str, str]
) -> list[Finding] | None:
    """Findings for a dsh installation (empty when sound); None for other hosts."""
    return verify_files(context, files) if host == SURFACE.name else None


PROFILE = "web"
"""The DSH profile the notes and the unregister command use."""


def host_steps(operation: str, context: RenderContext) -> HostSteps:
    """Install: how to link the package into DSH. Uninstall: unlink it (else `--dump-config` fails)."""
    if operation == "install":
        folder = (
            f"$PWD/.dsh/plugins/{PACKAGE}"
            if context.scope == "project"
            else f"${{DSH_HOME:-$HOME/.dsh}}/plugins/{PACKAGE}"
        )
        where = "From this folder, load" if context.scope == "project" else "Load"
        return HostSteps(
            notes=(
                f'{where} the plugin into DSH, then restart it: `dsh plugin --profile {PROFILE} add -w "link:{folder}"`.',
            )
        )
    return HostSteps(
        notes=("Restart DSH: the loopx-dsh package and the LoopX skill are gone.",),
        unregister=(("dsh", "plugin", "--profile", PROFILE, "remove", PACKAGE),),
    )


@hookimpl
def loopx_host_steps(host: str, operation: str, context: RenderContext) -> HostSteps | None:
    """What to do in DSH after an install or uninstall; None for other hosts."""
    return host_steps(operation, context) if host == SURFACE.name else None
