"""`loopx workflow-skills`: install, uninstall or check one host's facade."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from loopx_core import __version__
from loopx_core.errors import UsageError
from loopx_core.hosts.manager import get_plugin_manager, host
from loopx_core.hosts.model import FacadeFile, HostSurface, RenderContext
from loopx_installer import merge
from loopx_installer.apply import apply, diff
from loopx_installer.manifest import Manifest, sha256
from loopx_installer.paths import bases, display, manifest_path, safe_path
from loopx_installer.plan import plan_install, plan_uninstall

Operation = Literal["install", "uninstall", "check"]


@dataclass
class Request:
    """One `workflow-skills` invocation."""

    operation: Operation
    surface: str
    scope: str = "project"
    target: Path | None = None
    layout: str = "default"
    goal_id: str | None = None
    agent_id: str | None = None
    loopx_command: str = "loopx"
    dry_run: bool = False
    force: bool = False


@dataclass
class Report:
    """What happened (or would happen), file by file."""

    operation: str
    host: str
    scope: str
    layout: str
    dry_run: bool
    files: list[dict[str, str]] = field(default_factory=list)
    diffs: list[str] = field(default_factory=list)
    backups: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    drift: list[dict[str, str]] = field(default_factory=list)

    @property
    def conflicts(self) -> int:
        """How many files were left alone because of a conflict."""
        return sum(1 for f in self.files if f["status"] == "conflict")

    def to_json(self) -> dict[str, Any]:
        """The report as JSON data."""
        data: dict[str, Any] = {
            "operation": self.operation,
            "host": self.host,
            "scope": self.scope,
            "layout": self.layout,
            "dry_run": self.dry_run,
            "files": self.files,
            "backups": self.backups,
            "notices": self.notices,
        }
        if self.dry_run:
            data["diffs"] = self.diffs
        if self.operation == "check":
            data["drift"] = self.drift
            data["clean"] = not self.drift
        return data


def context_for(surface: HostSurface, request: Request, manifest: Manifest) -> RenderContext:
    """The render context of this request (the same for rendering and verifying)."""
    if request.scope not in surface.scopes:
        raise UsageError(f"{surface.name} has no {request.scope} scope (scopes: {', '.join(surface.scopes)})")
    if request.layout not in surface.layouts:
        raise UsageError(
            f"{surface.name} has no layout {request.layout!r} (layouts: {', '.join(surface.layouts)})"
        )
    from loopx_core.clock import now

    return RenderContext(
        host=surface.name,
        scope=request.scope,  # type: ignore[arg-type]
        layout=request.layout,
        loopx_command=request.loopx_command,
        goal_id=request.goal_id,
        agent_id=request.agent_id,
        loopx_version=__version__,
        created_at_ms=manifest.installed_at_ms.get(surface.name) or int(now().timestamp() * 1000),
        project_dir=str((request.target or Path.cwd()).resolve()),
    )


def render(surface: HostSurface, context: RenderContext, pm: Any) -> list[FacadeFile]:
    """The host's facade files for this context, through its plugin."""
    files = pm.hook.loopx_render_facade(host=surface.name, context=context)
    if files is None:
        raise UsageError(f"no plugin renders a facade for {surface.name!r}")
    return files


def run(request: Request) -> Report:
    """Plan (and unless dry-run, apply) an install or uninstall, or check for drift."""
    if request.scope not in ("project", "user"):
        raise UsageError("--scope must be project or user")
    pm = get_plugin_manager()
    surface = host(pm, request.surface)
    roots = bases(request.scope, request.target)
    manifest = Manifest.load(manifest_path(request.scope, request.target))
    report = Report(request.operation, surface.name, request.scope, request.layout, request.dry_run)
    if request.operation == "check":
        return _check(surface, request, pm, roots, manifest, report)
    if request.operation == "install":
        context = context_for(surface, request, manifest)
        files = render(surface, context, pm)
        placed = [(f, roots[f.base]) for f in files]
        actions = plan_install(surface.name, placed, manifest, force=request.force)
        executables = {str(safe_path(base, f.path)) for f, base in placed if f.executable}
    else:
        actions = plan_uninstall(surface.name, manifest, force=request.force)
        executables = set()
    for action in actions:
        shown = display(action.path, roots)
        report.files.append({"path": shown, "status": action.status, "detail": action.detail})
        if request.dry_run and action.status not in ("unchanged", "conflict"):
            report.diffs.append(diff(action, shown))
    if not request.dry_run:
        if request.operation == "install":
            manifest.installed_at_ms.setdefault(surface.name, context.created_at_ms)
        else:
            manifest.installed_at_ms.pop(surface.name, None)
        report.backups = apply(surface.name, actions, manifest, executables)
    changed = any(a.status not in ("unchanged", "conflict") for a in actions)
    if surface.restart_notice and changed:
        report.notices.append(surface.restart_notice.format(**{k: str(v) for k, v in roots.items()}))
    return report


def _check(
    surface: HostSurface,
    request: Request,
    pm: Any,
    roots: dict[str, Path],
    manifest: Manifest,
    report: Report,
) -> Report:
    context = context_for(surface, request, manifest)
    files = render(surface, context, pm)
    installed: dict[str, str] = {}
    wanted: set[str] = set()
    for f in files:
        path = safe_path(roots[f.base], f.path)
        wanted.add(str(path))
        shown = display(path, roots)
        current = path.read_text(encoding="utf-8") if path.exists() else None
        record = manifest.files.get(str(path))
        problem = _drift(f, current, record, surface.name)
        report.files.append({"path": shown, "status": problem or "ok", "detail": ""})
        if problem:
            report.drift.append({"path": shown, "problem": problem})
        if current is not None:
            installed[f"{f.base}/{f.path}"] = current
    for name in manifest.owned_by(surface.name):
        if name not in wanted:
            shown = display(Path(name), roots)
            report.drift.append(
                {"path": shown, "problem": "stale: installed but no longer part of the facade"}
            )
    findings = pm.hook.loopx_verify_installation(host=surface.name, context=context, files=installed) or []
    report.drift += [{"path": f.path, "problem": f.problem} for f in findings]
    return report


def _drift(f: FacadeFile, current: str | None, record: Any, host_name: str) -> str | None:
    if current is None:
        return "missing"
    if f.merge == "owned":
        if record is None or (host_name not in record.owners and not f.shared):
            return "not installed by LoopX"
        if sha256(current) != record.written_sha256:
            return "edited since LoopX wrote it"
        return None if current == f.content else "stale: the template changed (re-install)"
    present = {
        "json": lambda: merge.has_json(current, f.content, f.owned_keys),
        "toml": lambda: merge.has_toml(current, f.content, f.owned_keys),
        "markdown": lambda: merge.has_markdown(current, f.content, host_name),
    }[f.merge]()
    return None if present else "LoopX's keys are missing or differ (re-install)"
