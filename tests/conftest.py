"""Shared fixtures: an isolated project, a frozen clock, CLI runners, snapshot helpers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import settings
from typer.testing import CliRunner

from loopx_core.store.files import FileStore
from tests.snapshot_ext import JsonSnapshot, MarkdownSnapshot, TextSnapshot

# `make test` draws the same examples on every run (a clean clone's CI cannot fail on a draw no
# one has seen); `make fuzz` draws fresh ones, to find what the fixed draws miss.
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("explore", print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
T0_ISO = "2026-11-29T12:00:00Z"
REPO = Path(__file__).resolve().parent.parent
LOOPX_BIN = Path(sys.executable).parent / "loopx"


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Never touch the real home: HOME and every host's config dir point into a temp folder."""
    home = tmp_path_factory.mktemp("home")
    for name in ("HOME", "CODEX_HOME", "CLAUDE_CONFIG_DIR", "DSH_HOME", "DSH_AGENTS_HOME"):
        monkeypatch.setenv(name, str(home / name.lower()) if name != "HOME" else str(home))
    monkeypatch.delenv("LOOPX_ROOT", raising=False)
    monkeypatch.delenv("LOOPX_NOW", raising=False)
    monkeypatch.chdir(home)  # nothing a test runs may write into the repository by accident
    return home


@pytest.fixture
def snapshot_json(snapshot):  # type: ignore[no-untyped-def]
    """A snapshot stored as `snapshots/<test module>/<test>.json`."""
    return snapshot.use_extension(JsonSnapshot)


@pytest.fixture
def snapshot_md(snapshot):  # type: ignore[no-untyped-def]
    """A snapshot stored as `snapshots/<test module>/<test>.md`."""
    return snapshot.use_extension(MarkdownSnapshot)


@pytest.fixture
def snapshot_txt(snapshot):  # type: ignore[no-untyped-def]
    """A snapshot stored as `snapshots/<test module>/<test>.txt`."""
    return snapshot.use_extension(TextSnapshot)


@dataclass
class Project:
    """A temporary project with a LoopX store and a clock the test moves by hand."""

    root: Path
    store: FileStore
    now: datetime = T0

    def at(self, minutes: float) -> datetime:
        """T0 plus `minutes`."""
        return T0 + timedelta(minutes=minutes)

    def state_file(self, goal_id: str) -> Path:
        """The goal's state.json."""
        return self.store.goal_path(goal_id)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """An initialised, empty project."""
    root = tmp_path / "project"
    root.mkdir()
    store = FileStore(root)
    store.init()
    return Project(root, store)


@dataclass
class CliResult:
    """What one `loopx` invocation did."""

    exit_code: int
    stdout: str
    stderr: str

    def json(self) -> object:
        """stdout parsed as one JSON document."""
        return json.loads(self.stdout)


class Cli:
    """Runs `loopx` in-process (typer's CliRunner) against one project root, at a fixed time."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.root = root
        self.monkeypatch = monkeypatch
        self.runner = CliRunner()
        self.now = T0_ISO

    def __call__(self, *args: str, now: str | None = None, input: str | None = None) -> CliResult:
        """Invoke `loopx --root ROOT ARGS...`."""
        from loopx_core.cli.app import app

        self.monkeypatch.setenv("LOOPX_NOW", now or self.now)
        result = self.runner.invoke(
            app, ["--root", str(self.root), *args], input=input, catch_exceptions=False
        )
        return CliResult(result.exit_code, result.stdout, result.stderr)


@pytest.fixture
def cli(project: Project, monkeypatch: pytest.MonkeyPatch) -> Cli:
    """In-process `loopx` bound to the `project` fixture."""
    return Cli(project.root, monkeypatch)


def run_loopx(
    *args: str,
    root: Path,
    now: str | None = T0_ISO,
    env: dict[str, str] | None = None,
    timeout: float = 60,
    cwd: Path | None = None,
    input: str | None = None,
) -> CliResult:
    """Run the real `loopx` console script in a subprocess (in `cwd`, with `input` on stdin)."""
    full_env = dict(os.environ)
    full_env.pop("LOOPX_NOW", None)
    if now is not None:
        full_env["LOOPX_NOW"] = now
    full_env.update(env or {})
    proc = subprocess.run(
        [str(LOOPX_BIN), "--root", str(root), *args],
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
        check=False,
        cwd=cwd,
        input=input,
        stdin=None if input is not None else subprocess.DEVNULL,
    )
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def frozen(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Freeze `loopx_core.clock.now()` at T0."""
    monkeypatch.setenv("LOOPX_NOW", T0_ISO)
    yield


from tests.wheels import loopx_wheel  # noqa: E402, F401  (a session fixture shared by the wheel tests)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests marked `slow` run first, longest first (`slow(seconds=N)`; stable order
    otherwise): with `-n 2`, a minutes-long test handed out last would run alone while the
    other worker waits."""

    def weight(item: pytest.Item) -> tuple[bool, float]:
        slow = item.get_closest_marker("slow")
        return slow is None, -float(slow.kwargs.get("seconds", 0)) if slow else 0.0

    items.sort(key=weight)
