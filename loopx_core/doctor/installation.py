"""Installation checks: facade drift, a facade's `loopx` that does not resolve, the MCP server.

Every host recorded in the project's (and the user's) install manifest is checked with the
installer's own `--check`; its repair is a re-install, which never overwrites a file edited by
hand. The MCP server is started as a facade starts it and asked for one tool call through the
MCP SDK's own client.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
from pathlib import Path

from loopx_core.doctor.findings import Finding
from loopx_core.errors import LoopxError

MCP_TIMEOUT_S = 30.0


def installed(root: Path) -> list[tuple[str, str, Path | None, str | None, str]]:
    """(host, scope, target, loopx_command, layout) of every facade recorded as installed."""
    from loopx_core.hosts.manager import declared_bases, get_plugin_manager
    from loopx_installer.manifest import Manifest
    from loopx_installer.paths import manifest_path

    declared = declared_bases(get_plugin_manager())
    found = []
    for scope, target in (("project", root), ("user", None)):
        with contextlib.suppress(LoopxError, OSError):
            if not manifest_path(scope, target).is_file():
                continue
            manifest = Manifest.open(scope, target, declared)
            for host, record in sorted(manifest.installs.items()):
                found.append((host, record.scope, target, record.loopx_command, record.layout or "default"))
    return found


def missing_subjects(root: Path) -> list[Finding]:
    """Project facades whose recorded goal or agent the project's registry does not name."""
    from loopx_core.hosts.manager import declared_bases, get_plugin_manager
    from loopx_core.store.choice import open_store
    from loopx_installer.manifest import Manifest
    from loopx_installer.paths import manifest_path

    try:
        if not manifest_path("project", root).is_file():
            return []
        manifest = Manifest.open("project", root, declared_bases(get_plugin_manager()))
        registry = open_store(root).read_registry()
    except (LoopxError, OSError):
        return []  # an unreadable manifest or registry has findings of its own
    found = []
    for host, record in sorted(manifest.installs.items()):
        for pair in record.pairs:
            gone = [
                f"{kind} {value!r}"
                for kind, value, known in (
                    ("goal", pair.goal_id, registry.goals),
                    ("agent", pair.agent_id, registry.agents),
                )
                if value and value not in known
            ]
            if not gone:
                continue
            selectors = " ".join(
                f"{flag} {value}" for flag, value in (("-g", pair.goal_id), ("-a", pair.agent_id)) if value
            )
            found.append(
                Finding(
                    "facade_subject_missing",
                    f"the {host} facade drives {' and '.join(gone)}, which this project does not have: "
                    "its hooks answer 'not found'",
                    {"host": host, "scope": "project"},
                    hint=f"add them back (loopx goal add / loopx agent register), or "
                    f"loopx workflow-skills --uninstall --surface {host} {selectors}",
                )
            )
    return found


def lost_projects() -> list[Finding]:
    """User-scope pairs whose recorded project folder is gone: their automation runs nowhere."""
    from loopx_core.hosts.manager import declared_bases, get_plugin_manager
    from loopx_installer.manifest import Manifest
    from loopx_installer.paths import manifest_path
    from loopx_installer.selection import shown_project

    try:
        if not manifest_path("user", None).is_file():
            return []
        manifest = Manifest.open("user", None, declared_bases(get_plugin_manager()))
    except (LoopxError, OSError):
        return []  # facade_manifest_invalid says why
    found = []
    for host, record in sorted(manifest.installs.items()):
        for pair in record.pairs:
            if pair.project is None or os.path.isdir(pair.project):
                continue
            label = f"{pair.goal_id or '-'}/{pair.agent_id or '-'}"
            selectors = " ".join(f"{f} {v}" for f, v in (("-g", pair.goal_id), ("-a", pair.agent_id)) if v)
            found.append(
                Finding(
                    "facade_project_missing",
                    f"the {host} user-scope goal/agent {label} works in {shown_project(pair.project)}, "
                    "which is gone (moved or deleted): its heartbeat runs nowhere",
                    {"host": host, "scope": "user"},
                    hint=f"in the project's new folder: loopx workflow-skills --install --surface {host} "
                    f"--scope user {selectors}; or remove it: loopx workflow-skills --uninstall "
                    f"--surface {host} --scope user {selectors}",
                )
            )
    return found


def manifest_problems(root: Path) -> list[tuple[str, str]]:
    """(scope, why) for each install manifest, project's or user's, that cannot be read."""
    from loopx_core.hosts.manager import declared_bases, get_plugin_manager
    from loopx_installer.manifest import Manifest
    from loopx_installer.paths import manifest_path

    declared = declared_bases(get_plugin_manager())
    problems = []
    for scope, target in (("project", root), ("user", None)):
        try:
            path = manifest_path(scope, target)
            if path.exists() or path.is_symlink():  # a folder or a dangling link is a damaged one too
                Manifest.open(scope, target, declared)
        except LoopxError as exc:
            problems.append((scope, exc.message))
        except OSError as exc:
            problems.append((scope, f"the {scope} install manifest cannot be read ({exc.strerror})"))
    return problems


def resolves(command: str | None) -> bool:
    """True when the facade's `loopx` command names an executable program."""
    try:
        words = shlex.split(command or "loopx")
    except ValueError:
        return False
    return bool(words) and shutil.which(words[0]) is not None


def any_manifest(root: Path) -> bool:
    """True when something stands where the project's or the user's install manifest goes."""
    from loopx_installer.paths import manifest_path

    for scope, target in (("project", root), ("user", None)):
        try:
            path = manifest_path(scope, target)
        except LoopxError:
            return True  # a manifest path LoopX refuses (a link): the checks below say why
        if os.path.lexists(path):
            return True
    return False


def check_installation(root: Path, *, mcp: bool | None = None) -> list[Finding]:
    """Facade findings for every installed host, and the MCP server (when a facade uses it, or asked)."""
    if not mcp and not any_manifest(root):
        return []  # nothing installed: no host to check, no facade using the MCP server
    from loopx_core.hosts.manager import get_plugin_manager
    from loopx_installer.service import Request, run

    pm = get_plugin_manager()
    found: list[Finding] = []
    facades = installed(root)
    for scope, why in manifest_problems(root):
        found.append(
            Finding(
                "facade_manifest_invalid",
                why,
                {"scope": scope},
                hint="restore it from a backup, or move it aside and re-install each host with "
                + (
                    "workflow-skills --install --scope user"
                    if scope == "user"
                    else "workflow-skills --install"
                ),
            )
        )
    found += missing_subjects(root) + lost_projects()
    for host, scope, target, command, layout in facades:
        subject = {"host": host, "scope": scope}
        if not resolves(command):
            found.append(
                Finding(
                    "facade_command_missing",
                    f"the {host} facade ({scope}) runs {command or 'loopx'!r}, which is not on PATH",
                    subject,
                    hint=f"{_install_command(host, scope)} --loopx-command PATH",
                    fix=_reinstall(host, scope, target, root, pm, use_this=True),
                )
            )
            continue
        unlisted = listing_problem(pm, host, scope, layout, root)
        if unlisted:
            found.append(Finding("host_unlisted", unlisted[0], subject, hint=unlisted[1]))
        try:
            report = run(Request("check", host, scope=scope, target=target, project=root), pm)
        except LoopxError as exc:
            found.append(Finding("facade_drift", exc.message, subject, hint="fix the manifest or re-install"))
            continue
        if report.drift:
            problems = "; ".join(f"{d['path']}: {d['problem']}" for d in report.drift[:5])
            found.append(
                Finding(
                    "facade_drift",
                    f"the {host} facade ({scope}) drifted: {problems}",
                    subject,
                    hint=_install_command(host, scope),
                    fix=_reinstall(host, scope, target, root, pm),
                )
            )
    if mcp or (mcp is None and facades):
        command = next((f[3] for f in facades if resolves(f[3])), None)
        problem = mcp_problem(root, command)
        if problem:
            found.append(
                Finding(
                    "mcp_unavailable",
                    problem,
                    {"command": "loopx mcp serve"},
                    hint="run `loopx mcp serve` by hand to see why; reinstall loopx-kit with its `mcp` dependency",
                )
            )
    return found


def listing_problem(pm: object, host: str, scope: str, layout: str, root: Path) -> tuple[str, str] | None:
    """(message, hint) when the host's CLI is on PATH and does not list LoopX; else None."""
    import subprocess

    from loopx_core.hosts.manager import hosts

    found = hosts(pm).get(host)  # type: ignore[arg-type]
    listing = found.listing(scope, layout) if found is not None else None
    if listing is None or shutil.which(listing.argv[0]) is None:
        return None  # the host cannot say, or its CLI is not installed here
    shown = shlex.join(listing.argv)
    try:
        proc = subprocess.run(
            listing.argv,
            cwd=root,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=listing.timeout_s,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"`{shown}` did not answer ({type(exc).__name__})", listing.hint
    if proc.returncode == 0 and listing.expect in proc.stdout:
        return None
    return f"`{shown}` does not list LoopX (the {host} facade, {scope} scope, is installed)", listing.hint


def _install_command(host: str, scope: str) -> str:
    """The command that re-installs a facade where it is (a user-scope one stays user-scope)."""
    return f"loopx workflow-skills --install --surface {host}" + (" --scope user" if scope == "user" else "")


def _reinstall(host: str, scope: str, target: Path | None, root: Path, pm: object, *, use_this: bool = False):  # type: ignore[no-untyped-def]
    def fix() -> str:
        from loopx_installer.lifecycle import default_loopx
        from loopx_installer.service import Request, run

        command = default_loopx()[0] if use_this else None
        request = Request("install", host, scope=scope, target=target, loopx_command=command, project=root)
        report = run(request, pm)  # type: ignore[arg-type]
        if report.conflicts:
            return f"re-install stopped: {report.conflicts} file(s) edited by hand (see --force)"
        return f"re-installed the {host} facade"

    return fix


def mcp_problem(root: Path, command: str | None) -> str | None:
    """Start `loopx mcp serve` and call its `status` tool; None when it answered, else why not."""
    import sys

    words = shlex.split(command) if command and resolves(command) else []
    if not words:
        words = [
            sys.executable,
            "-c",
            "import sys; from loopx_core.cli.entry import main; main(sys.argv[1:])",
        ]
    try:
        import anyio
        from mcp.client.session import ClientSession
        from mcp.client.stdio import StdioServerParameters, stdio_client
    except ImportError as exc:
        return f"the MCP SDK cannot be imported: {exc.name}"

    async def ask() -> str | None:
        params = StdioServerParameters(
            command=words[0], args=[*words[1:], "--root", str(root), "mcp", "serve"]
        )
        import os

        with anyio.fail_after(MCP_TIMEOUT_S), open(os.devnull, "w") as quiet:  # its stderr is not ours
            async with (
                stdio_client(params, errlog=quiet) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                result = await session.call_tool("status", {})
                return "the status tool answered with an error" if result.is_error else None

    try:
        return anyio.run(ask)
    except TimeoutError:
        return f"`loopx mcp serve` did not answer within {MCP_TIMEOUT_S:g}s"
    except Exception as exc:  # any failure to start or talk is the finding itself
        cause = _root_cause(exc)
        return f"`loopx mcp serve` failed: {type(cause).__name__}: {str(cause)[:120]}"


def _root_cause(exc: BaseException) -> BaseException:
    """The first leaf of an exception group (anyio wraps the client's failure in task groups)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc
