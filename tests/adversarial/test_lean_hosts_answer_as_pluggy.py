"""Class: a hot host command (`loopx hook NAME`, `loopx heartbeat-prompt`, should-run's host
hints) answering otherwise on the lean path (the built-in hosts without pluggy, hosts/builtin.py)
than through pluggy's registry.

Whatever else is installed beside the built-in plugins (a well-behaved third-party host, one that
claims a built-in event or host name, one whose entry point shadows a built-in, one that fails
at import, a distribution whose entry_points.txt importlib.metadata refuses), both paths print
the same bytes and exit with the same code. The other plugins are real distributions (a
dist-info folder on PYTHONPATH), loaded by pluggy as any other; `LOOPX_NO_FAST_PATH=1` is the
path through typer and pluggy.

A hook imports only the plugin LoopX's `loopx.events` table names for its event: the table
says, for each built-in plugin, exactly the events its hosts register (each event once), and
that lean answer is pluggy's for every event.
"""

from __future__ import annotations

import importlib.metadata
import sys
import tomllib
from pathlib import Path

import pytest

from loopx_core.hosts import Host, builtin
from loopx_core.hosts.manager import events, get_plugin_manager
from tests.builders import demo_project, distribution
from tests.conftest import run_loopx

HOST = """
from loopx_core.hosts import HookAnswer, Host, hookimpl


class Orbit(Host):
    name = {name!r}
    title = "Orbit IDE"
    events = {events!r}

    def render(self, context):
        return []

    def heartbeat_prompt(self, context):
        return f"Orbit heartbeat for {{context.goal_id}}."

    def handle_hook_event(self, event, call):
        return HookAnswer(f"orbit answers {{event}}")


@hookimpl
def loopx_register_hosts(register):
    register(Orbit())
"""
REFUSED = "an entry_points.txt importlib.metadata refuses"
SETUPS: dict[str, tuple[str, str]] = {
    "nothing else": ("", ""),
    "a third-party host": (HOST.format(name="orbit-ide", events=("orbit-event",)), "orbit-ide = orbit_host"),
    "one first by name": (HOST.format(name="aaa-ide", events=()), "aaa-ide = orbit_host"),
    "one claiming a built-in event": (
        HOST.format(name="orbit-ide", events=("claude-stop",)),
        "orbit-ide = orbit_host",
    ),
    "one claiming a built-in host": (HOST.format(name="codex-app", events=()), "orbit-ide = orbit_host"),
    "one shadowing a built-in entry point": (
        HOST.format(name="orbit-ide", events=("orbit-event",)),
        "claude-code = orbit_host",
    ),
    "one failing at import": ("raise ImportError('its dependency is missing')\n", "orbit-ide = orbit_host"),
    REFUSED: ("", "a line without an equals sign"),
}
"""Each setup: the third-party module's source and its `[loopx]` entry-point lines."""
COMMANDS = [
    ("hook", "claude-stop", "-g", "demo", "-a", "builder"),
    ("hook", "claude-session-start", "-g", "demo", "-a", "builder"),
    ("hook", "orbit-event", "-g", "demo", "-a", "builder"),
    ("heartbeat-prompt", "-g", "demo", "-a", "builder", "--surface", "codex-app"),
    ("heartbeat-prompt", "-g", "demo", "-a", "builder", "--surface", "orbit-ide"),
    ("heartbeat-prompt", "-g", "demo", "-a", "builder"),
    ("quota", "should-run", "-g", "demo", "-a", "builder", "--surface", "codex-app", "-f", "json"),
    ("quota", "should-run", "-g", "demo", "-a", "builder", "--surface", "orbit-ide", "-f", "json"),
]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("project")
    return demo_project(root)


def _site(folder: Path, source: str, entry_points: str) -> Path:
    folder.mkdir()
    if source or entry_points:
        (folder / "orbit_host.py").write_text(source)
        distribution(folder, "orbit-host", f"[loopx]\n{entry_points}\n")
    return folder


TYPER_CRASHES = (
    "outside the hosts: typer's path imports cli/app.py, whose first pydantic model asks pydantic's "
    "plugin loader (importlib.metadata.entry_points), which raises: one internal-error line "
    "(tests/adversarial/test_broken_environment.py), where the lean path gives pluggy's plugin_failed line"
)


@pytest.mark.parametrize(
    "setup",
    [
        pytest.param(s, marks=[pytest.mark.xfail(strict=True, reason=TYPER_CRASHES)] if s == REFUSED else [])
        for s in sorted(SETUPS)
    ],
)
def test_lean_and_pluggy_answer_alike(project: Path, tmp_path: Path, setup: str) -> None:
    site = _site(tmp_path / "site", *SETUPS[setup])
    answers, general = [], []
    for args in COMMANDS:
        for found, extra in ((answers, {}), (general, {"LOOPX_NO_FAST_PATH": "1"})):
            result = run_loopx(*args, root=project, input="{}", env={"PYTHONPATH": str(site), **extra})
            found.append((result.exit_code, result.stdout, result.stderr))
    for args, (code, _, stderr) in zip(COMMANDS, answers, strict=True):
        assert "Traceback" not in stderr and code in (0, 1, 2, 3) and stderr.count("\n") <= 1, (setup, args)
    assert answers == general
    if setup == "a third-party host":  # the lean path did not hide the other host
        assert answers[2] == (0, "orbit answers orbit-event\n", "")
        assert answers[4] == (0, "Orbit heartbeat for demo.\n", "")
    if setup == "nothing else":
        assert answers[0][0] == 0 and '"decision": "block"' in answers[0][1]
        assert answers[3][1].startswith("LoopX heartbeat for goal demo, agent builder.\n")


ENTRY_POINTS = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())["project"][
    "entry-points"
]
PLUGINS: dict[str, str] = ENTRY_POINTS[builtin.GROUP]
TABLE: dict[str, str] = ENTRY_POINTS[builtin.EVENTS]


@pytest.fixture
def lean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No plugin selection and the lean path on, whatever the outer environment says."""
    monkeypatch.delenv("LOOPX_PLUGINS", raising=False)
    monkeypatch.delenv("LOOPX_NO_FAST_PATH", raising=False)


@pytest.mark.parametrize("plugin", sorted(PLUGINS.values()))
def test_the_events_table_is_what_each_plugin_registers(plugin: str) -> None:
    """For each built-in plugin, the events its hosts register are the events the table gives it."""
    registered: list[Host] = []
    __import__(plugin)
    sys.modules[plugin].loopx_register_hosts(register=registered.append)
    assert sorted(e for h in registered for e in h.events) == sorted(
        e for e, m in TABLE.items() if m == plugin
    )


def test_no_event_is_named_twice_and_the_installed_table_is_pyprojects() -> None:
    """The installed metadata is pyproject.toml's (`pip install -e .` after an edit), no event twice."""
    dist = importlib.metadata.distribution(builtin.DISTRIBUTION)
    installed = [(ep.name, ep.value) for ep in dist.entry_points if ep.group == builtin.EVENTS]
    assert len({name for name, _ in installed}) == len(installed)
    assert dict(installed) == TABLE and set(TABLE.values()) <= set(PLUGINS.values())


@pytest.mark.usefixtures("lean_env")
def test_the_lean_answer_is_pluggys_for_every_event() -> None:
    """Every event pluggy's registry knows: the lean path imports the table's plugin alone, and its
    host is the registry's (same class, name, events, bases)."""
    full = events(get_plugin_manager())
    assert sorted(full) == sorted(TABLE)
    for event, host in full.items():
        assert builtin.event_plugin(event) == TABLE[event]
        lean = builtin.event_host(event)
        assert lean is not None and type(lean) is type(host)
        assert (lean.name, lean.events, lean.bases) == (host.name, host.events, host.bases)
