"""A throwaway place to install a host facade: a project folder and a home, every host home inside.

The sandbox points `HOME` and every environment variable a loaded host declares for its base
folders (`Base.env`: `CODEX_HOME`, `CLAUDE_CONFIG_DIR`, ... and the host's own) into a temporary
folder, each at its declared default there, freezes LoopX's clock with `LOOPX_NOW`, and runs the
real installer (`loopx_installer.service.run`) with the plugin manager under test. Nothing
outside the sandbox is read or written.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pluggy
import pytest

from loopx_core.clock import iso
from loopx_core.errors import LoopxError
from loopx_core.hosts import FacadeFile, Host
from loopx_core.hosts.manager import declared_bases
from loopx_core.hosts.manager import host as find_host
from loopx_installer import service
from loopx_installer.paths import bases, place, safe_path
from loopx_installer.service import Report, Request

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
"""When the sandbox installs."""
LATER = T0 + timedelta(days=1)
"""When it re-installs and checks: a real user does that another day."""


class ConformanceError(AssertionError):
    """A host plugin broke a conformance rule; the message lists every problem found."""

    def __init__(self, check: str, problems: list[str]) -> None:
        super().__init__(f"{check}:\n" + "\n".join(f"  - {p}" for p in problems))
        self.check = check
        self.problems = problems


@dataclass(frozen=True)
class Case:
    """One way to install a facade: scope, layout, the ids baked in and how hosts run LoopX."""

    scope: str = "project"
    layout: str = "default"
    goal_id: str | None = "demo"
    agent_id: str | None = "builder"
    loopx_command: str = "loopx"

    @property
    def id(self) -> str:
        """A short name: `scope-layout`."""
        return f"{self.scope}-{self.layout}"


def cases_for(h: Host) -> list[Case]:
    """One case per (scope, layout) pair the host declares."""
    return [Case(scope, layout) for scope, layout in h.cases]


@dataclass
class Rendered:
    """One installation in a sandbox: the installer's report and the files it left (text by path)."""

    report: Report
    files: dict[str, str]
    """Path relative to the sandbox (`project/...` or `home/...`) -> text, the manifest left out and
    the sandbox folder written as `<SANDBOX>`."""


class Sandbox:
    """A temporary project and home for one host, with the installer wired to the plugin manager."""

    def __init__(
        self, root: Path, pm: pluggy.PluginManager, host: str, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        self.root = root
        self.pm = pm
        self.host = host
        self.monkeypatch = monkeypatch
        self.project = root / "project"
        self.home = root / "home"
        self.now = T0
        for folder in (self.project, self.home):
            folder.mkdir(parents=True, exist_ok=True)
        self.activate()

    def activate(self) -> None:
        """Point the environment (homes, clock, current folder) here."""
        self.monkeypatch.setenv("HOME", str(self.home))
        try:
            declared = declared_bases(self.pm)
        except LoopxError:  # a broken declaration: `check_surface` reports it
            declared = []
        for base in declared:
            for name in base.env:
                self.monkeypatch.delenv(name, raising=False)
        for base in declared:
            if base.env and base.env[0] not in os.environ:
                self.monkeypatch.setenv(base.env[0], str(self.home / base.default))
        self.monkeypatch.setenv("LOOPX_NOW", iso(self.now))
        self.monkeypatch.delenv("LOOPX_ROOT", raising=False)
        self.monkeypatch.chdir(self.project)

    @property
    def surface(self) -> Host:
        """The host under test, as its plugin registers it."""
        return find_host(self.pm, self.host)

    def fresh(self, name: str) -> Sandbox:
        """A new, empty sandbox in a sub-folder (the environment now points there)."""
        return Sandbox(self.root / name, self.pm, self.host, self.monkeypatch)

    def at(self, when: datetime) -> None:
        """Set LoopX's clock."""
        self.now = when
        self.monkeypatch.setenv("LOOPX_NOW", iso(when))

    def request(self, operation: str, case: Case, *, dry_run: bool = False) -> Request:
        """The installer request for `case` (project scope installs into `project/`)."""
        target = self.project if case.scope == "project" else None
        return Request(
            operation,  # type: ignore[arg-type]
            self.host,
            case.scope,
            target,
            case.layout,
            case.goal_id,
            case.agent_id,
            case.loopx_command,
            dry_run=dry_run,
        )

    def run(self, operation: str, case: Case, *, dry_run: bool = False) -> Report:
        """Run the real installer; a LoopX error becomes a conformance failure."""
        try:
            return service.run(self.request(operation, case, dry_run=dry_run), self.pm)
        except LoopxError as exc:
            problem = f"{type(exc).__name__}: {exc.message}"
            raise ConformanceError(f"{operation} ({case.id})", [problem]) from None

    def roots(self, case: Case) -> dict[str, Path]:
        """The folder each base name maps to for `case`."""
        return bases(case.scope, self.project if case.scope == "project" else None, declared_bases(self.pm))

    def path(self, case: Case, f: FacadeFile) -> Path:
        """Where the installer puts `f` for `case` (a path leaving its base is a usage error)."""
        base, rel = place(f, case.scope, {b.name: b for b in self.surface.bases})
        return safe_path(self.roots(case)[base], rel)

    def render(self, case: Case) -> list[FacadeFile]:
        """The facade files for `case`, rendered with the installer's own context."""
        return service.render_request(self.request("install", case), self.pm)

    def tree(self) -> dict[str, bytes | None]:
        """Every file (its bytes) and folder (None) in the sandbox, by relative path."""
        return {
            str(p.relative_to(self.root)): (None if p.is_dir() and not p.is_symlink() else p.read_bytes())
            for p in sorted(self.root.rglob("*"))
        }

    def install(self, case: Case) -> Rendered:
        """Install `case` and read back what landed (for snapshots)."""
        report = self.run("install", case)
        shown = str(self.root)
        files = {
            rel: data.decode("utf-8", "replace").replace(shown, "<SANDBOX>")
            for rel, data in self.tree().items()
            if data is not None and ".loopx" not in Path(rel).parts
        }
        return Rendered(report, files)

    def probe(self, case: Case) -> list[FacadeFile]:
        """The facade files for `case`, rendered in a sandbox of their own (a render hook's side
        effects land there), after which the environment points back here."""
        files = Sandbox(
            self.root.parent / f"probe-{self.root.name}", self.pm, self.host, self.monkeypatch
        ).render(case)
        self.activate()
        return files

    def populate_foreign(self, case: Case, files: list[FacadeFile]) -> list[str]:
        """Put the user's own content in every shared file of `files` (and one file of their own)."""
        written = []
        (self.project / "NOTES.txt").write_text("The user's own file.\n")
        for f in files:
            if f.merge == "owned":
                continue
            path = self.path(case, f)
            if path.exists():
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(foreign_content(f))
            written.append(str(path.relative_to(self.root)))
        return written


def _sibling(doc: dict[str, Any], key_path: tuple[str, ...]) -> None:
    """Put foreign data next to the owned key (or as another element of the owned array)."""
    node = doc
    parents = key_path[:-2] if key_path[-1] == "[]" else key_path[:-1]
    for key in parents:
        node = node.setdefault(key, {})
    if key_path[-1] == "[]":
        node.setdefault(key_path[-2], []).append({"foreign": "the user's own entry"})
    else:
        node.setdefault("foreign", {"keep": "the user's own value"})


def foreign_content(f: FacadeFile) -> str:
    """What a user might already have in a shared file: other keys next to each owned one."""
    if f.merge == "markdown":
        return "# The user's notes\n\nLoopX must keep this text as it is.\n"
    doc: dict[str, Any] = {"foreignSetting": "keep"}
    for key_path in f.owned_keys:
        _sibling(doc, key_path)
    if f.merge == "json":
        return json.dumps(doc, indent=4) + "\n"  # not the installer's indent: a rewrite would show
    import tomlkit

    return "# The user's own settings, with a comment LoopX must keep.\n" + tomlkit.dumps(doc)


USER_LINE = "A line the user added after LoopX installed.\n"


def edit_shared(path: Path, kind: str) -> None:
    """Change a shared file the way a user would after LoopX merged into it: add a setting of their own."""
    text = path.read_text()
    if kind == "json":
        doc = json.loads(text)
        doc["addedLater"] = {"by": "the user"}
        path.write_text(json.dumps(doc, indent=2) + "\n")
    elif kind == "toml":
        path.write_text(text + '\n[added_later]\nby = "the user"\n')
    else:
        path.write_text(text + "\n" + USER_LINE)


def expected_after_edit(original: str, kind: str) -> Any:
    """What a shared file should hold after uninstall: the original plus the user's edit (parsed data
    for JSON and TOML, whose layout the un-merge may change; text for Markdown)."""
    if kind == "json":
        return {**json.loads(original), "addedLater": {"by": "the user"}}
    if kind == "toml":
        import tomllib

        return {**tomllib.loads(original), "added_later": {"by": "the user"}}
    return original + "\n" + USER_LINE


def parsed(text: str, kind: str) -> Any:
    """A shared file's content as `expected_after_edit` states it."""
    if kind == "json":
        return json.loads(text)
    if kind == "toml":
        import tomllib

        return tomllib.loads(text)
    return text


def with_ids(case: Case, goal_id: str | None, agent_id: str | None, loopx_command: str) -> Case:
    """`case` with other ids and LoopX command."""
    return replace(case, goal_id=goal_id, agent_id=agent_id, loopx_command=loopx_command)
