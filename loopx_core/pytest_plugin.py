"""The LoopX pytest plugin: fixtures and a conformance suite for host plugins.

Switch it on with one line in your tests' conftest.py (it is not auto-loaded):

    pytest_plugins = ["loopx_core.pytest_plugin"]

then run the suite on your host with

    from loopx_core.pytest_plugin import HostConformance

    class TestMyHost(HostConformance):
        host = "my-host"

Fixtures: `loopx_plugin_manager` (override it to register plugins in-process),
`loopx_host` (the class's `host`, else the `loopx_host` ini value), `loopx_sandbox` (a temp
project and home with every declared base folder's variable pointed inside), `loopx_cases`
(one per declared scope x layout pair) and
`loopx_render` (install into a fresh sandbox, return the report and files, for snapshots).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pluggy
import pytest

from loopx_core.conformance import Case, HostConformance, Rendered, Sandbox
from loopx_core.conformance.sandbox import cases_for
from loopx_core.hosts.manager import get_plugin_manager

__all__ = ["HostConformance"]


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register the `loopx_host` ini value (the host function-style tests check)."""
    parser.addini("loopx_host", "LoopX host (surface name) the loopx_* fixtures work on", default="")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the checks a `HostConformance` class lists in `known_issues` as strict xfails."""
    for item in items:
        cls = getattr(item, "cls", None)
        if cls is not None and issubclass(cls, HostConformance):
            reason = cls.known_issues.get(getattr(item, "originalname", item.name))
            if reason:
                item.add_marker(pytest.mark.xfail(strict=True, reason=reason))


@pytest.fixture
def loopx_plugin_manager() -> pluggy.PluginManager:
    """The plugin manager under test: every installed `loopx` entry point (`LOOPX_PLUGINS` applies).

    Override it to check a plugin registered in-process:
    `get_plugin_manager(load_entrypoints=False, plugins=[("my-host", module)])`.
    """
    return get_plugin_manager()


@pytest.fixture
def loopx_host(request: pytest.FixtureRequest) -> str:
    """The host to check: the test class's `host`, else the `loopx_host` ini value."""
    name = getattr(request.cls, "host", "") or request.config.getini("loopx_host")
    if not name:
        pytest.fail("name the host: `host = ...` on the test class or `loopx_host = ...` in the pytest ini")
    return str(name)


@pytest.fixture
def loopx_sandbox(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    loopx_plugin_manager: pluggy.PluginManager,
    loopx_host: str,
) -> Sandbox:
    """A temp project and home for the host; HOME and every host home point inside, the clock is frozen."""
    return Sandbox(tmp_path / "loopx-sandbox", loopx_plugin_manager, loopx_host, monkeypatch)


@pytest.fixture
def loopx_cases(loopx_sandbox: Sandbox) -> list[Case]:
    """The cases to check: every (scope, layout) pair the host declares."""
    return cases_for(loopx_sandbox.surface)


@pytest.fixture
def loopx_render(loopx_sandbox: Sandbox) -> Callable[..., Rendered]:
    """`loopx_render(scope="project", layout="default", goal_id="demo", agent_id="builder")`:
    install into a fresh sandbox with the real installer and return the report and the files."""
    count = 0

    def render(
        scope: str = "project",
        layout: str = "default",
        goal_id: str | None = "demo",
        agent_id: str | None = "builder",
        loopx_command: str = "loopx",
    ) -> Rendered:
        nonlocal count
        count += 1
        box = loopx_sandbox.fresh(f"render-{count}")
        return box.install(Case(scope, layout, goal_id, agent_id, loopx_command))

    return render
