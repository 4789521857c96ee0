"""`loopx hosts ...` and `loopx workflow-skills`: host plugins and their installable facades.

The CLI is the composition root: it reaches host plugins only through the plugin manager,
and the installer (`loopx_installer`) only inside these commands.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from loopx_core.cli.common import FormatOption, check_scope, check_surface
from loopx_core.cli.formats import Format
from loopx_core.cli.output import Block, Table, emit, reporting, steps
from loopx_core.errors import ExitCode, UsageError

app = typer.Typer(
    add_completion=False,
    help="Host plugins: list the hosts LoopX can install into, or scaffold a new one.",
    no_args_is_help=True,
)

HERE = Path(".")


@app.command("list")
def list_hosts(fmt: FormatOption = Format.auto) -> None:
    """List every host, its version and the plugin it comes from."""
    from loopx_core.hosts.manager import get_plugin_manager, registry

    with reporting(fmt):
        rows = [
            {
                "name": name,
                "title": entry.host.title,
                "version": entry.version,
                "scopes": list(entry.host.scopes),
                "layouts": list(entry.host.layouts),
                "cases": [f"{scope}/{layout}" for scope, layout in entry.host.cases],
                "plugin": entry.plugin,
                "distribution": entry.distribution,
                "source": entry.source,
            }
            for name, entry in registry(get_plugin_manager()).items()
        ]
        emit(
            {"hosts": rows},
            fmt,
            lambda d: Table(
                ["host", "title", "version", "scopes", "layouts", "from"],
                [
                    [
                        r["name"],
                        r["title"],
                        r["version"],
                        ", ".join(r["scopes"]),
                        ", ".join(r["layouts"]),
                        f"{r['distribution']} ({r['source']})",
                    ]
                    for r in d["hosts"]
                ],
                empty="No hosts: no plugin is loaded (check LOOPX_PLUGINS).",
            ),
        )


@app.command("scaffold")
def scaffold_host(
    name: Annotated[
        str, typer.Argument(help="The new host's id, kebab-case (e.g. acme-ide).", show_default=False)
    ],
    directory: Annotated[Path, typer.Option("--dir", help="Folder to create loopx-host-NAME/ in.")] = HERE,
    title: Annotated[
        str | None, typer.Option("--title", help="The host's display name (default: NAME capitalised).")
    ] = None,
    fmt: FormatOption = Format.auto,
) -> None:
    """Write a new host plugin package, ready to install and test.

    The folder loopx-host-NAME/ holds a pyproject (the `loopx` entry point), the plugin module,
    its Jinja templates, tests (the conformance suite, snapshots) and a README. As generated it
    pip-installs, shows up in `loopx hosts list`, passes the conformance suite
    (`loopx_core.pytest_plugin`) and installs with `loopx workflow-skills --surface NAME`.
    Refuses a loopx-host-NAME folder that exists and is not empty, and a NAME a loaded plugin
    declares.
    """
    from loopx_core.hosts import scaffold
    from loopx_core.hosts.manager import get_plugin_manager, registry

    with reporting(fmt):
        plugin = scaffold.names(name, title)
        known = registry(get_plugin_manager())
        if plugin.name in known:
            raise UsageError(f"host {plugin.name!r} already exists (plugin {known[plugin.name].plugin})")
        folder, files = scaffold.scaffold(plugin, directory)
        data = {
            "host": plugin.name,
            "distribution": plugin.distribution,
            "module": plugin.module,
            "folder": str(folder),
            "files": files,
            "next_steps": scaffold.next_steps(plugin, folder),
        }
        emit(
            data,
            fmt,
            lambda d: "\n".join(
                [
                    f"Wrote {d['folder']}/ ({d['distribution']}, module {d['module']}):",
                    *(f"  {f}" for f in d["files"]),
                    "Next steps:",
                    *(f"  {step}" for step in d["next_steps"]),
                ]
            ),
        )


def workflow_skills(
    ctx: typer.Context,
    surface: Annotated[
        str,
        typer.Option(
            "--surface", "-s", help="Host to install into (see `loopx hosts list`).", show_default=False
        ),
    ],
    install: Annotated[bool, typer.Option("--install", help="Install the facade.")] = False,
    uninstall: Annotated[
        bool, typer.Option("--uninstall", help="Remove exactly what was installed.")
    ] = False,
    check: Annotated[bool, typer.Option("--check", help="Exit 9 if the installation drifted (CI).")] = False,
    scope: Annotated[
        str | None,
        typer.Option(
            "--scope", help="project (default) or user; with --target, the scope recorded at install."
        ),
    ] = None,
    target: Annotated[
        Path | None, typer.Option("--target", help="Install under this folder instead.")
    ] = None,
    layout: Annotated[
        str | None,
        typer.Option(
            "--layout", help="Host layout, e.g. plugin for claude-code (default: as installed, else default)."
        ),
    ] = None,
    goal_id: Annotated[
        str | None,
        typer.Option(
            "--goal-id", "-g", help="Goal the facade drives (hooks, heartbeat); default: as installed."
        ),
    ] = None,
    agent_id: Annotated[
        str | None, typer.Option("--agent-id", "-a", help="Agent the facade drives; default: as installed.")
    ] = None,
    loopx_command: Annotated[
        str | None,
        typer.Option(
            "--loopx-command",
            help="How hosts run LoopX (name or path); default: as installed, else `loopx` when it is "
            "on PATH, else this loopx's absolute path.",
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the plan and a unified diff; write nothing.")
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Replace user-edited files (a backup is kept first).")
    ] = False,
    fmt: FormatOption = Format.auto,
) -> None:
    """Install, uninstall or check a host's LoopX facade (skills, commands, MCP config, hooks).

    Never clobbers: shared files are merged (only LoopX's keys or block change), user-edited
    files are conflicts (kept; --force replaces them after a backup), re-install is a no-op,
    uninstall takes out only LoopX's parts (every byte of yours stays) and unregisters LoopX from
    the host where its CLI can, even once the host's plugin is gone. One conflict anywhere writes nothing (exit 5); 7 when a path would leave its base
    or go through a symlink; 8 for a manifest of an unknown schema; 9 on drift.
    """
    with reporting(fmt):
        chosen = [
            name for name, on in (("install", install), ("uninstall", uninstall), ("check", check)) if on
        ]
        if len(chosen) != 1:
            raise UsageError("give exactly one of --install, --uninstall or --check")
        scope = check_scope(scope)
        from loopx_core.hosts.manager import get_plugin_manager
        from loopx_core.ids import check_id
        from loopx_core.store.roots import find_root
        from loopx_installer.progress import listening
        from loopx_installer.service import Request, run

        for kind, value in (("goal", goal_id), ("agent", agent_id)):
            if value is not None:
                check_id(kind, value)
        project = find_root((ctx.find_root().obj or {}).get("root"))
        if chosen[0] == "install" and (goal_id or agent_id):
            _require_known(project, scope, goal_id, agent_id)
        if target is None and scope in (None, "project"):
            # The project's facade goes into the project (--root, else the nearest folder up
            # holding .loopx/), not into whichever subfolder the command runs in: there no host
            # would read it, and its manifest's .loopx/ would hide the project from every command
            # run below it ("no LoopX state here").
            target, scope = project, "project"
        try:
            name = check_surface(surface) or surface
        except UsageError:
            if chosen[0] != "uninstall":
                raise
            name = surface  # a host whose plugin is gone: uninstalled from what its install recorded
        request = Request(
            chosen[0],  # type: ignore[arg-type]
            name,
            scope=scope,
            target=target,
            layout=layout,
            goal_id=goal_id,
            agent_id=agent_id,
            loopx_command=loopx_command,
            dry_run=dry_run,
            force=force,
            project=project,
        )
        with listening(steps(fmt)):
            report = run(request, get_plugin_manager())
        emit(report.to_json(), fmt, _human, _table)
        if report.operation == "check" and report.drift:
            raise SystemExit(int(ExitCode.DRIFT))
        if report.conflicts:
            raise SystemExit(int(ExitCode.CONFLICT))


def _require_known(project: Any, scope: str | None, goal_id: str | None, agent_id: str | None) -> None:
    """A facade drives a goal and an agent the project has: its hooks and heartbeat would
    otherwise answer "not found" on every event (exit 3 here, before anything is written).

    A user-scope install made outside any project (no project state here or above) serves
    the projects its host opens later: there is no project to ask, so nothing is checked.
    """
    from pathlib import Path

    from loopx_core.ops.require import require_agent, require_goal
    from loopx_core.store.choice import open_store
    from loopx_core.store.files import STATE_DIR

    state = Path(project) / STATE_DIR
    if scope == "user" and not any((state / name).exists() for name in ("registry.json", "store.json")):
        return  # no project here (a `~/.loopx/` may hold only the user's install manifest)
    registry = open_store(project).read_registry()
    if goal_id:
        require_goal(registry, goal_id)
    if agent_id:
        require_agent(registry, agent_id)


def _shown_path(path: str, scope: str) -> str:
    """A user-scope path relative to the home folder (or its stand-in) is shown with `~/`."""
    if scope == "user" and not path.startswith(("~", "$", "<")):
        return f"~/{path}"
    return path


def _head(data: dict[str, Any]) -> str:
    verb = {"install": "Install", "uninstall": "Uninstall", "check": "Check"}[data["operation"]]
    layout = f", {data['layout']} layout" if data["layout"] != "default" else ""
    head = f"{verb} {data['host']} ({data['scope']} scope{layout})"
    return head + (" - dry run, nothing written" if data["dry_run"] else "")


def _tail(data: dict[str, Any]) -> list[str]:
    lines = [text.rstrip("\n") for text in data.get("diffs", [])]
    lines += [f"Backup: {backup}" for backup in data["backups"]]
    if data["operation"] == "check":
        lines.append("Clean." if data["clean"] else f"Drift in {len(data['drift'])} place(s):")
        lines += [f"  {_shown_path(d['path'], data['scope'])}: {d['problem']}" for d in data["drift"]]
    else:
        counts: dict[str, int] = {}
        for f in data["files"]:
            counts[f["status"]] = counts.get(f["status"], 0) + 1
        lines.append(", ".join(f"{n} {s}" for s, n in counts.items()) or "Nothing to do.")
    return lines + [f"Note: {n}" for n in data["notices"]]


def _human(data: dict[str, Any]) -> str:
    """The report as text: one line per file, the status column as wide as its longest value."""
    width = max((len(f["status"]) for f in data["files"]), default=0)
    lines = [_head(data)]
    for f in data["files"]:
        path = _shown_path(f["path"], data["scope"])
        lines.append(f"  {f['status']:<{width}}  {path}" + (f"  ({f['detail']})" if f.get("detail") else ""))
    return "\n".join(lines + _tail(data))


def _table(data: dict[str, Any]) -> list[Block]:
    """The report for a terminal: the files as an aligned table."""
    rows = [[f["status"], _shown_path(f["path"], data["scope"]), f.get("detail")] for f in data["files"]]
    blocks: list[Block] = [_head(data)]
    if rows:
        blocks.append(Table(["status", "file", "detail"], rows))
    return [*blocks, "\n".join(_tail(data))]
