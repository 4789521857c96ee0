"""`loopx workflow-skills`: install, uninstall or check one host's facade.

The caller hands in the plugin manager (the CLI's, or the conformance kit's under test); the
host object it names renders, verifies and says what follows, and the core decides from the
host's declaration which scope x layout pairs exist.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pluggy

from loopx_core import __version__
from loopx_core.errors import ConflictError, StateInvalidError, UsageError
from loopx_core.hosts import FacadeFile, Finding, Host, RenderContext
from loopx_core.hosts.manager import declared_bases, host, plugin_call
from loopx_core.hosts.model import CORE_BASES
from loopx_installer import lifecycle, merge, orphan
from loopx_installer.apply import apply, blocked, diff
from loopx_installer.hostkeys import adopt, fingerprint
from loopx_installer.manifest import FileRecord, Install, Manifest, Pair
from loopx_installer.paths import place, safe_path
from loopx_installer.plan import Action, Placed, plan_install, plan_uninstall, read
from loopx_installer.progress import step
from loopx_installer.selection import Selection, owned_elsewhere, resolve

Operation = Literal["install", "uninstall", "check"]


@dataclass
class Request:
    """One `workflow-skills` invocation; None selectors reuse what the install recorded."""

    operation: Operation
    surface: str
    scope: str | None = None
    target: Path | None = None
    layout: str | None = None
    goal_id: str | None = None
    agent_id: str | None = None
    loopx_command: str | None = None
    dry_run: bool = False
    force: bool = False
    project: Path | None = None
    """The project the loop works in (a user-scope automation's `cwds`); default: the current folder."""


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
    written: bool = False
    loopx_command: str = "loopx"

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
            "written": self.written,
            "loopx_command": self.loopx_command,
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


def shown_status(action: Action) -> str:
    """How the report names an action: a file put back as it was before LoopX is `restore`d."""
    if action.status == "remove" and action.restore_original and action.after is not None:
        return "restore"
    return action.status


def project_folder(scope: str, target: Path | None, project: Path | None) -> Path:
    """The project a loop works in: at project scope the target (it is the project); at user
    scope the target stands in for the home folder, so the project is `project` (else cwd)."""
    if scope == "project" and target is not None:
        return target.resolve()
    return (project or Path.cwd()).resolve()


def context_for(
    h: Host, selection: Selection, pair: Pair, target: Path | None, project: Path | None = None
) -> RenderContext:
    """The render context of one goal/agent pair (the same for rendering and verifying)."""
    return RenderContext(
        host=h.name,
        scope=selection.scope,  # type: ignore[arg-type]
        layout=selection.layout,
        loopx_command=selection.loopx_command,
        goal_id=pair.goal_id,
        agent_id=pair.agent_id,
        loopx_version=__version__,
        created_at_ms=pair.installed_at_ms,
        project_dir=pair.project or str(project_folder(selection.scope, target, project)),
    )


def render(h: Host, context: RenderContext) -> list[FacadeFile]:
    """The host's facade files for this context (a host's refusal, a ValueError, is a usage error)."""
    try:
        files = h.render(context)
    except ValueError as exc:
        raise UsageError(f"{h.name}: {str(exc)[:200]}") from None
    if not isinstance(files, list):
        raise TypeError(f"render() returned {type(files).__name__}, not a list of FacadeFile")
    allowed = {*CORE_BASES, *(b.name for b in h.bases)}
    for f in files:
        if not isinstance(f, FacadeFile):
            raise TypeError(f"render() returned a {type(f).__name__}, not a FacadeFile")
        if f.base not in allowed:
            raise UsageError(f"{h.name}: facade file {f.path[:80]!r} has the unknown base {f.base[:40]!r}")
    return files


@dataclass
class _Run:
    request: Request
    host: Host
    manifest: Manifest
    selection: Selection

    @property
    def roots(self) -> dict[str, Path]:
        return self.manifest.roots

    def context(self, pair: Pair) -> RenderContext:
        return context_for(self.host, self.selection, pair, self.request.target, self.request.project)

    def placed(self) -> tuple[list[Placed], dict[str, Pair], list[Pair]]:
        """Every pair's files (newest pair wins a shared path), who won each path, the pairs kept."""
        winners: dict[str, tuple[Placed, Pair]] = {}
        own = {b.name: b for b in self.host.bases}
        for pair in self.selection.pairs:
            with plugin_call(self.host.name, "render"):
                files = render(self.host, self.context(pair))
                if self.selection.project is not None and pair.project is None:
                    files = self._as_written(pair, files)
            for f in files:
                base, rel = place(f, self.selection.scope, own)
                path = safe_path(self.roots[base], rel)
                winners[str(path)] = (Placed(f, path, self.manifest.shown(path), base, rel), pair)
        kept = [p for p in self.selection.pairs if any(w is p for _, w in winners.values())]
        return [p for p, _ in winners.values()], {k: w for k, (_, w) in winners.items()}, kept

    def _as_written(self, pair: Pair, files: list[FacadeFile]) -> list[FacadeFile]:
        """A pair recorded before LoopX kept its project: each of its files that depends on the
        project (it renders otherwise for another folder) stays as LoopX last wrote it, since
        rendering it for this project would move it here (an install naming the pair adopts it)."""
        probe = self.context(pair)._replace(project_dir="/nonexistent/loopx-probe")
        elsewhere = {f.path: f.content for f in render(self.host, probe)}
        own = {b.name: b for b in self.host.bases}
        out = []
        for f in files:
            if f.merge == "owned" and elsewhere.get(f.path) != f.content:
                base, rel = place(f, self.selection.scope, own)
                path = safe_path(self.roots[base], rel)
                record = self.manifest.files.get(str(path))
                current = read(path, self.manifest.shown(path))
                mine = (record.owners.get(self.host.name) or {}) if record else {}
                keys = sorted({*f.host_keys, *(mine.get("host_keys") or [])})
                if (
                    record is not None
                    and current is not None
                    and fingerprint(current, rel, keys) == record.written_sha256
                ):
                    f = f._replace(content=current)
            out.append(f)
        return out


def _now_ms() -> int:
    from loopx_core.clock import now

    return int(now().timestamp() * 1000)


def _case(h: Host, scope: str, layout: str) -> None:
    """Refuse a scope x layout pair the host does not declare (one line, exit 2)."""
    if (scope, layout) not in h.cases:
        cases = ", ".join(f"{s}/{lay}" for s, lay in h.cases)
        raise UsageError(f"{h.name} has no {scope} scope with the {layout!r} layout (it has {cases})")


def _start(request: Request, pm: pluggy.PluginManager) -> _Run:
    if request.scope not in (None, "project", "user"):
        raise UsageError("--scope must be project or user")
    h = host(pm, request.surface)
    manifest = Manifest.open(request.scope or "project", request.target, declared_bases(pm))
    record = manifest.installs.get(h.name)
    scope = request.scope or (record.scope if record and request.target is not None else None) or "project"
    if scope not in h.scopes:
        raise UsageError(f"{h.name} has no {scope} scope (scopes: {', '.join(h.scopes)})")
    selection = resolve(
        request.operation,
        scope,
        request.layout,
        request.goal_id,
        request.agent_id,
        request.loopx_command,
        record,
        _now_ms(),
        lifecycle.default_loopx() if request.loopx_command is None else ("loopx", None),
        project=str(project_folder(scope, request.target, request.project)) if scope == "user" else None,
        force=request.force,
    )
    _case(h, selection.scope, selection.layout)
    return _Run(request, h, manifest, selection)


def render_request(request: Request, pm: pluggy.PluginManager) -> list[FacadeFile]:
    """The files an install of `request` would put in place (its newest goal/agent pair)."""
    run_ = _start(request, pm)
    return render(run_.host, run_.context(run_.selection.pairs[-1]))


def _orphan_uninstall(request: Request, pm: pluggy.PluginManager, unknown: UsageError) -> Report:
    """Uninstall a host whose plugin is gone, from what the install recorded (else `unknown`)."""
    if request.operation != "uninstall" or request.scope not in (None, "project", "user"):
        raise unknown
    scope = request.scope or "project"
    manifest = Manifest.open(scope, request.target, declared_bases(pm))
    name = request.surface
    if not orphan.recorded(manifest, name):
        raise unknown
    orphan.refuse_unplaced(manifest, name)
    if request.goal_id is not None or request.agent_id is not None:
        raise UsageError(f"{name}'s plugin is not installed: uninstall all of it (no --goal-id/--agent-id)")
    record = manifest.installs.get(name)
    report = Report(
        "uninstall", name, scope, (record.layout if record else None) or "default", request.dry_run
    )
    report.loopx_command = (record.loopx_command if record else None) or "loopx"
    step(f"planning the removal of {name} ({scope} scope) from what its install recorded")
    actions = plan_uninstall(name, manifest, force=request.force)
    return _carry_out(report, actions, manifest, request, [orphan.notice(name)])


def _carry_out(
    report: Report, actions: list[Action], manifest: Manifest, request: Request, notes: list[str]
) -> Report:
    """Report the plan of a full uninstall and, unless a conflict blocks it (or dry-run), apply it."""
    for action in actions:
        report.files.append({"path": action.shown, "status": shown_status(action), "detail": action.detail})
        if request.dry_run and action.status not in ("unchanged", "conflict"):
            report.diffs.append(diff(action))
    stopped = blocked(actions, request.force)
    if stopped:
        report.notices.append(
            f"Nothing written: {stopped} conflict(s) (all or nothing; --force replaces edited files, "
            "with backups first, and writes the rest)."
        )
        return report
    report.notices += notes
    if not request.dry_run:
        manifest.installs.pop(report.host, None)
        try:
            report.backups = apply(report.host, actions, manifest, set(), force=request.force)
        except OSError as exc:
            raise StateInvalidError(
                f"uninstall stopped part-way: {exc.strerror or 'I/O error'}; fix that and run it again"
            ) from None
        report.written = True
    return report


def run(request: Request, pm: pluggy.PluginManager) -> Report:
    """Plan (and unless dry-run, apply) an install or uninstall, or check for drift.

    An uninstall of a host whose plugin is gone works from what its install recorded.
    """
    try:
        host(pm, request.surface)
    except UsageError as unknown:
        return _orphan_uninstall(request, pm, unknown)
    r = _start(request, pm)
    h = r.host
    sel = r.selection
    report = Report(request.operation, h.name, sel.scope, sel.layout, request.dry_run)
    report.loopx_command = sel.loopx_command
    if request.operation == "check":
        step(f"checking {h.name} ({sel.scope} scope)")
        return _check(r, report)
    kept = sel.pairs
    executables: set[str] = set()
    recorded = r.manifest.installs[h.name].pairs if h.name in r.manifest.installs else []
    if request.operation == "install" or not sel.full_uninstall:
        step(f"rendering {h.name} ({sel.scope} scope, {sel.layout} layout)")
        placed, _, kept = r.placed()
        owned_elsewhere(sel, recorded, kept, request.force)
        actions = plan_install(h.name, placed, r.manifest, force=request.force)
        executables = {str(p.path) for p in placed if p.file.executable}
    else:
        owned_elsewhere(sel, recorded, [], request.force)
        step(f"planning the removal of {h.name} ({sel.scope} scope)")
        actions = plan_uninstall(h.name, r.manifest, force=request.force)
    for action in actions:
        report.files.append({"path": action.shown, "status": shown_status(action), "detail": action.detail})
        if request.dry_run and action.status not in ("unchanged", "conflict"):
            report.diffs.append(diff(action))
    stopped = blocked(actions, request.force)
    changed = any(a.status not in ("unchanged", "conflict") for a in actions)
    report.notices += sel.notes
    if stopped:
        report.notices.append(
            f"Nothing written: {stopped} conflict(s) (all or nothing; --force replaces edited files, "
            "with backups first, and writes the rest)."
        )
        return report
    steps = lifecycle.host_steps(h, request.operation, r.context(kept[-1] if kept else sel.pairs[-1]))
    if request.operation == "uninstall" and sel.full_uninstall and r.manifest.owned_by(h.name):
        report.notices += lifecycle.unregister(
            h, steps.unregister, r.roots["target"], dry_run=request.dry_run
        )
    if not request.dry_run:
        if request.operation == "uninstall" and sel.full_uninstall:
            r.manifest.installs.pop(h.name, None)
        else:
            r.manifest.installs[h.name] = Install(sel.scope, sel.layout, sel.loopx_command, kept)
        writes = sum(a.status != "unchanged" for a in actions)
        step(f"writing {writes} file(s)" if writes else "nothing to write")
        try:
            report.backups = apply(h.name, actions, r.manifest, executables, force=request.force)
        except OSError as exc:
            raise StateInvalidError(
                f"{request.operation} stopped part-way: {exc.strerror or 'I/O error'}; fix that and run it again"
            ) from None
        report.written = True
    if changed:
        report.notices += list(steps.notes)
    return report


def _check(r: _Run, report: Report) -> Report:
    placed, winners, kept = r.placed()
    installed: dict[str, str] = {}
    for spot in placed:
        current, problem = None, None
        try:
            current = read(spot.path, spot.shown)
        except ConflictError:
            problem = "not a readable text file"
        record = r.manifest.files.get(str(spot.path))
        problem = problem or _drift(spot.file, current, record, r.host.name)
        report.files.append({"path": spot.shown, "status": problem or "ok", "detail": ""})
        if problem:
            report.drift.append({"path": spot.shown, "problem": problem})
        if current is not None:
            installed[spot.file.key] = current
    for name in r.manifest.owned_by(r.host.name):
        if name not in winners:
            report.drift.append(
                {
                    "path": r.manifest.shown(Path(name)),
                    "problem": "stale: installed but no longer part of the facade",
                }
            )
    shown = {p.file.key: p.shown for p in placed}
    for pair in kept:
        own = {p.file.key for p in placed if winners[str(p.path)] is pair}
        with plugin_call(r.host.name, "verify"):
            findings = list(r.host.verify(r.context(pair), installed))
            if not all(isinstance(f, Finding) for f in findings):
                raise TypeError("verify() must return a list of Finding")
        for finding in findings:
            if pair is kept[-1] or finding.path in own:
                report.drift.append(
                    {"path": shown.get(finding.path, finding.path), "problem": finding.problem}
                )
    return report


def _drift(f: FacadeFile, current: str | None, record: FileRecord | None, host_name: str) -> str | None:
    if current is None:
        return "missing"
    if f.merge == "owned":
        if record is None or (host_name not in record.owners and not f.shared):
            return "not installed by LoopX"
        keys = sorted({*f.host_keys, *(k for o in record.owners.values() for k in o.get("host_keys") or [])})
        if fingerprint(current, f.path, keys) != record.written_sha256:
            return "edited since LoopX wrote it"
        return (
            None
            if adopt(f.content, current, f.path, f.host_keys) == current
            else "stale: the template changed (re-install)"
        )
    present = merge.has(f.merge, current, merge.Fragment(f.content, f.owned_keys), host_name)
    return None if present else "LoopX's keys are missing or differ (re-install)"
