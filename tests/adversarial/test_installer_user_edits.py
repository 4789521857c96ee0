"""Class: the installer never loses a byte the user wrote (data loss).

Whenever the user writes (before the first install, between installs, after), uninstall takes
out exactly LoopX's parts and keeps the rest; the bytes from before an install come back only
while the file is byte-identical to what LoopX last wrote. A hypothesis state machine drives
random sequences of install (with one of two LoopX commands, so a re-install also updates
every file) / uninstall / check / user edits (append, prepend, an edit outside and inside
LoopX's part, deleting LoopX's part, deleting the file, editing or creating a file LoopX owns)
over every host at once (Codex and DSH share a skill), at project and at user scope, with
every kind of file the installer writes: Markdown blocks, JSON, TOML and whole owned files.

Invariants, after every step:
- a host not installed leaves each of its shared files exactly as the user's own text;
- a file LoopX owns that the user edited or created keeps the user's bytes (install and
  uninstall are conflicts, exit 5, and write nothing);
- a run with a conflict, and every `--check`, changes no byte anywhere (manifest included);
- `--check` right after a clean install, with no edit of LoopX's parts since, finds no drift.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from loopx_core.hosts.blocks import markers
from loopx_core.hosts.manager import declared_bases, get_plugin_manager, host
from loopx_installer.paths import bases, place, safe_path
from loopx_installer.service import Report, Request, render_request, run

HOSTS = ("claude-code", "codex-app", "dsh")
COMMANDS = ("loopx", "/opt/loopx/bin/loopx")
ENV = ("HOME", "CODEX_HOME", "CLAUDE_CONFIG_DIR", "DSH_HOME", "DSH_AGENTS_HOME", "LOOPX_NOW")


@dataclass
class Shared:
    """One file LoopX merges into, and the user's own text of it (JSON: the user's data)."""

    path: Path
    kind: str
    host: str
    user: Any

    def expected(self) -> bytes | None:
        """The file as the user's text alone (None: no file)."""
        if self.kind == "json":
            return (json.dumps(self.user, indent=2) + "\n").encode() if self.user else None
        return self.user.encode() if self.user else None


@dataclass
class Sandbox:
    """A scope's folders, and where every host's files land there."""

    root: Path
    scope: str
    target: Path | None
    shared: dict[Path, Shared] = field(default_factory=dict)
    owned: dict[Path, set[str]] = field(default_factory=dict)
    """Each owned file and the hosts that render it."""


def _files(scope: str, target: Path | None, project: Path) -> tuple[dict[Path, Shared], dict[Path, set[str]]]:
    pm = get_plugin_manager()
    roots = bases(scope, target, declared_bases(pm))
    shared: dict[Path, Shared] = {}
    owned: dict[Path, set[str]] = {}
    for name in HOSTS:
        h = host(pm, name)
        own = {b.name: b for b in h.bases}
        request = Request("install", name, scope=scope, target=target, loopx_command="loopx", project=project)
        for f in render_request(request, pm):
            base, rel = place(f, scope, own)
            path = safe_path(roots[base], rel)
            if f.merge == "owned":
                owned.setdefault(path, set()).add(name)
            else:
                shared[path] = Shared(path, f.merge, name, {} if f.merge == "json" else "")
    return shared, owned


def _tree(root: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and folder (None) under `root`."""
    found: dict[str, bytes | None] = {}
    for path in sorted(root.rglob("*")):
        found[path.relative_to(root).as_posix()] = path.read_bytes() if path.is_file() else None
    return found


def _loopx_parts(shared: Shared) -> list[str]:
    """LoopX's parts still in the file."""
    if not shared.path.exists():
        return []
    text = shared.path.read_text()
    if shared.kind == "markdown":
        return [m for m in markers(shared.host) if m in text]
    if shared.kind == "toml":
        return ["[mcp_servers.loopx]"] if "mcp_servers.loopx" in text else []
    data = json.loads(text)
    found = ["mcpServers.loopx"] if "loopx" in (data.get("mcpServers") or {}) else []
    return found + (["a LoopX hook"] if "hook claude-" in text else [])


class UserEdits(RuleBasedStateMachine):
    """Random install / uninstall / check / user edits over every host in one scope."""

    scope = "project"
    base: Path | None = None
    """Where each machine makes its folder: pytest's temporary base (`_machines_base`)."""

    def __init__(self) -> None:
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix="loopx-edits-", dir=self.base))
        self.saved = {name: os.environ.get(name) for name in ENV}
        home = self.root / "home"
        project = self.root / "proj"
        for folder in (home, project / ".loopx"):
            folder.mkdir(parents=True)
        os.environ["HOME"] = str(home)
        for name in ENV[1:-1]:
            os.environ[name] = str(home / name.lower())
        os.environ["LOOPX_NOW"] = "2026-11-29T12:00:00Z"
        self.project = project
        self.target = project if self.scope == "project" else None
        self.shared, self.owned = _files(self.scope, self.target, project)
        self.installed: dict[str, bool] = dict.fromkeys(HOSTS, False)
        self.clean: dict[str, bool] = dict.fromkeys(HOSTS, False)
        self.mine: dict[Path, bytes] = {}
        """Owned files the user edited or wrote: their bytes are the user's."""
        self.counter = 0

    def teardown(self) -> None:
        for name, value in self.saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        shutil.rmtree(self.root, ignore_errors=True)

    # -- helpers ----------------------------------------------------------------------------
    def _tag(self) -> str:
        self.counter += 1
        return f"u{self.counter}"

    def _hosts_of(self, path: Path) -> set[str]:
        return {self.shared[path].host} if path in self.shared else self.owned.get(path, set())

    def _touch(self, path: Path) -> None:
        """An edit of LoopX's part of `path`: --check may find drift from now on."""
        for name in self._hosts_of(path):
            self.clean[name] = False

    def _has_mine(self, name: str) -> bool:
        return any(name in self.owned[p] for p in self.mine)

    def _run(self, operation: str, name: str, command: str | None = None) -> Report:
        request = Request(
            operation,  # type: ignore[arg-type]
            name,
            scope=self.scope,
            target=self.target,
            loopx_command=command,
            project=self.project,
        )
        return run(request, get_plugin_manager())

    def _write(self, path: Path, text: str | None) -> None:
        if text is None:
            path.unlink(missing_ok=True)
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def _edit_json(self, shared: Shared, change: Any) -> None:
        """Apply `change` (dict -> dict) to the file's data and to the user's data."""
        data = json.loads(shared.path.read_text()) if shared.path.exists() else {}
        shared.user = change(shared.user)
        data = change(data)
        self._write(shared.path, json.dumps(data, indent=2) + "\n" if data else None)

    # -- LoopX -------------------------------------------------------------------------------
    @rule(name=st.sampled_from(HOSTS), command=st.sampled_from(COMMANDS))
    def install(self, name: str, command: str) -> None:
        """Install (or re-install, or update to another LoopX command)."""
        before = _tree(self.root)
        report = self._run("install", name, command)
        if report.conflicts:
            assert _tree(self.root) == before, "a run with a conflict wrote something"
            assert self._has_mine(name), report.files  # only a file that is the user's stops it
            return
        self.installed[name] = self.clean[name] = True
        for owners in self.owned.values():
            if name in owners:  # a skill two hosts share now names this install's LoopX command
                for other in owners - {name}:
                    self.clean[other] = False

    @rule(name=st.sampled_from(HOSTS))
    def uninstall(self, name: str) -> None:
        """Uninstall a host: its parts go, every byte of the user's stays."""
        before = _tree(self.root)
        report = self._run("uninstall", name)
        if report.conflicts:
            assert _tree(self.root) == before, "a run with a conflict wrote something"
            assert self._has_mine(name), report.files
            return
        self.installed[name] = self.clean[name] = False
        for shared in self.shared.values():
            if shared.host == name:
                assert not _loopx_parts(shared), (shared.path.name, _loopx_parts(shared))
        for path, owners in self.owned.items():
            if name in owners and path not in self.mine and not any(self.installed[h] for h in owners):
                assert not path.exists(), f"{path.name} is LoopX's and stayed after uninstall"

    @rule(name=st.sampled_from(HOSTS))
    def check(self, name: str) -> None:
        """--check writes nothing, and finds no drift right after a clean install."""
        before = _tree(self.root)
        report = self._run("check", name)
        assert _tree(self.root) == before, "--check wrote something"
        if self.installed[name] and self.clean[name]:
            assert not report.drift, report.drift

    # -- the user ---------------------------------------------------------------------------
    def _shared(self, data: st.DataObject) -> Shared:
        return data.draw(st.sampled_from(sorted(self.shared.values(), key=lambda s: str(s.path))))

    def append(self, shared: Shared) -> None:
        """The user adds text at the end of a shared file (a key last, a table last)."""
        tag = self._tag()
        text = shared.path.read_text() if shared.path.exists() else ""
        if shared.kind == "json":
            self._edit_json(shared, lambda d: {**d, tag: f"{tag}-text"})
            return
        chunk = f"{tag}: text\n" if shared.kind == "markdown" else f'[{tag}]\nvalue = "{tag}-text"\n'
        if shared.kind == "toml" and text:
            # the blank line before a table the user adds below LoopX's: once LoopX's table goes,
            # tomlkit leaves no blank line at the top of the file (a layout byte, not the user's data)
            shared.user += "\n" if shared.user else ""
            text += "\n"
        shared.user += chunk
        self._write(shared.path, text + chunk)

    def prepend(self, shared: Shared) -> None:
        """The user adds text at the top of a shared file (a key first)."""
        tag = self._tag()
        text = shared.path.read_text() if shared.path.exists() else ""
        if shared.kind == "json":
            self._edit_json(shared, lambda d: {tag: f"{tag}-text", **d})
            return
        chunk = f"{tag}: text\n" if shared.kind == "markdown" else f'{tag} = "{tag}-text"\n'
        shared.user = chunk + shared.user
        self._write(shared.path, chunk + text)

    def edit_outside(self, shared: Shared) -> None:
        """The user changes a line (a value) of their own: the first not yet changed."""
        if shared.kind == "json":
            keys = [k for k, v in shared.user.items() if str(v).endswith("-text")]
            if keys:
                key = keys[0]
                self._edit_json(shared, lambda d: {**d, key: f"{key}-edited"})
            return
        old, new = (": text\n", ": edited\n") if shared.kind == "markdown" else ('-text"', '-edited"')
        tags = [line.split(":")[0].split(" ")[0].strip('[]"') for line in shared.user.splitlines()]
        tags = [t for t in tags if t.startswith("u") and f"{t}{old}" in shared.user]
        if not tags:
            return
        tag = tags[0]
        shared.user = shared.user.replace(f"{tag}{old}", f"{tag}{new}")
        self._write(shared.path, shared.path.read_text().replace(f"{tag}{old}", f"{tag}{new}"))

    @rule(data=st.data(), how=st.sampled_from(["append", "prepend", "edit_outside"]))
    def user_writes(self, data: st.DataObject, how: str) -> None:
        """The user writes in a shared file, outside LoopX's part (one rule, so that installs and
        uninstalls come as often as edits between them)."""
        getattr(self, how)(self._shared(data))

    @rule(data=st.data())
    def edit_inside(self, data: st.DataObject) -> None:
        """The user changes LoopX's part (its block's text, its server's command)."""
        shared = self._shared(data)
        if not shared.path.exists():
            return
        text = shared.path.read_text()
        if shared.kind == "markdown":
            begin = markers(shared.host)[0] + "\n"
            edited = text.replace(begin, begin + "my note inside\n", 1)
        elif shared.kind == "toml":
            edited = text.replace('command = "', 'command = "edited-', 1)
        else:
            doc = json.loads(text)
            if "loopx" in (doc.get("mcpServers") or {}):
                doc["mcpServers"]["loopx"]["command"] = "edited"
            edited = json.dumps(doc, indent=2) + "\n"
        if edited != text:
            self._write(shared.path, edited)
            self._touch(shared.path)

    @rule(data=st.data())
    def delete_part(self, data: st.DataObject) -> None:
        """The user takes LoopX's part out by hand: the file is their own text again."""
        shared = self._shared(data)
        wanted = shared.expected()
        if (shared.path.read_bytes() if shared.path.exists() else None) != wanted:
            self._write(shared.path, None if wanted is None else wanted.decode())
            self._touch(shared.path)

    @rule(data=st.data())
    def delete_file(self, data: st.DataObject) -> None:
        """The user deletes a file LoopX wrote or merged into."""
        path = data.draw(st.sampled_from(sorted([*self.shared, *self.owned], key=str)))
        if not path.exists():
            return
        path.unlink()
        self._touch(path)
        self.mine.pop(path, None)
        if path in self.shared:
            shared = self.shared[path]
            shared.user = {} if shared.kind == "json" else ""

    @rule(data=st.data())
    def edit_owned(self, data: st.DataObject) -> None:
        """The user edits a file LoopX owns (or writes one where LoopX would)."""
        path = data.draw(st.sampled_from(sorted(self.owned, key=str)))
        text = path.read_bytes() if path.exists() else b""
        mine = text + f"{self._tag()}: the user's own line\n".encode()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(mine)
        self.mine[path] = mine
        self._touch(path)

    # -- what must always hold ------------------------------------------------------------------
    @invariant()
    def uninstalled_files_are_the_users(self) -> None:
        """A host not installed leaves each of its shared files exactly as the user's text."""
        for shared in self.shared.values():
            if not self.installed[shared.host]:
                got = shared.path.read_bytes() if shared.path.exists() else None
                assert got == shared.expected(), (shared.path.name, got, shared.expected())

    @invariant()
    def owned_edits_stay(self) -> None:
        """A file LoopX owns that the user edited keeps the user's bytes."""
        for path, mine in self.mine.items():
            assert path.read_bytes() == mine, path.name


class UserEditsAtUserScope(UserEdits):
    """The same over the hosts' user homes (`$CODEX_HOME`, `$CLAUDE_CONFIG_DIR`, `~/.claude.json`...)."""

    scope = "user"


SETTINGS = settings(
    max_examples=int(os.environ.get("LOOPX_EDIT_EXAMPLES", "25")),
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target]
    if os.environ.get("LOOPX_EDIT_NO_SHRINK")
    else list(Phase),
)


@pytest.fixture(autouse=True)
def _machines_base(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The machines' folders under pytest's base, which pytest cleans."""
    UserEdits.base = tmp_path_factory.mktemp("edits")


@pytest.mark.slow
@pytest.mark.parametrize("machine", [UserEdits, UserEditsAtUserScope], ids=["project", "user"])
def test_no_user_byte_is_ever_lost(machine: type[UserEdits]) -> None:
    """Random sequences of installs, uninstalls, checks and user edits never lose a user byte."""
    run_state_machine_as_test(machine, settings=SETTINGS)


@pytest.mark.parametrize("machine", [UserEdits, UserEditsAtUserScope], ids=["project", "user"])
@pytest.mark.parametrize("how", ["append", "prepend", "edit_outside"])
@pytest.mark.parametrize("before", [False, True], ids=["created", "existed"])
def test_every_shared_file_keeps_an_edit_made_between_installs(
    machine: type[UserEdits], how: str, before: bool
) -> None:
    """Each shared file of each host, at each scope: the user's text from before the install (or
    none), an edit between an install and an update, then uninstall: the user's text exactly."""
    probe = machine()
    count = len(probe.shared)
    probe.teardown()
    for index in range(count):
        m = machine()
        try:
            shared = sorted(m.shared.values(), key=lambda s: str(s.path))[index]
            if before:
                m.append(shared)
            m.install(shared.host, COMMANDS[0])
            m.append(shared)
            getattr(m, how)(shared)
            m.install(shared.host, COMMANDS[0])  # writes nothing
            m.install(shared.host, COMMANDS[1])  # updates LoopX's part over the edit
            getattr(m, how)(shared)
            m.install(shared.host, COMMANDS[1])
            m.uninstall(shared.host)
            m.uninstalled_files_are_the_users()
            assert shared.path.exists()
        finally:
            m.teardown()


def test_reinstall_then_uninstall_keeps_an_edit_made_between(tmp_path: Path) -> None:
    """The reviewer's case: `# More`, appended between two installs, survives uninstall."""
    machine = UserEdits()
    try:
        agents = next(s for s in machine.shared.values() if s.kind == "markdown")
        agents.path.write_text("# Mine\n")
        agents.user = "# Mine\n"
        machine.install("codex-app", "loopx")
        agents.path.write_text(agents.path.read_text() + "# More\n")
        agents.user += "# More\n"
        machine.install("codex-app", "loopx")
        machine.uninstall("codex-app")
        assert agents.path.read_text() == "# Mine\n# More\n"
    finally:
        machine.teardown()
