"""The pytest plugin's function-style fixtures, as a host plugin's author uses them.

Beside the `HostConformance` suite (tests/test_conformance.py), `loopx_core.pytest_plugin`
offers fixtures for the author's own tests: `loopx_host` from the `loopx_host` ini value when
no class names it (and a clear failure when neither does), `loopx_cases` for every declared
case, and `loopx_render`, which installs into a fresh sandbox each call with the real
installer and returns the report and the files (the sandbox's path shown as `<SANDBOX>`, for
snapshots; nothing of `.loopx/`). Run in pytester sessions on the Toy host
(tests/broken_plugins/toy.py), registered in-process as an author would.
"""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

CONFTEST = """
import pytest

from loopx_core.hosts.manager import get_plugin_manager
from tests.broken_plugins.toy import plugin

pytest_plugins = ["loopx_core.pytest_plugin"]


@pytest.fixture
def loopx_plugin_manager():
    return get_plugin_manager(load_entrypoints=False, plugins=[("toy", plugin)])
"""

AUTHOR_TESTS = """
def test_cases(loopx_host, loopx_cases):
    assert loopx_host == "toy"
    assert [(c.scope, c.layout) for c in loopx_cases] == [("project", "default"), ("user", "default")]


def test_render_installs_into_a_fresh_sandbox_each_time(loopx_render, tmp_path):
    first = loopx_render()
    again = loopx_render(goal_id=None, agent_id=None, loopx_command="/opt/tools/loopx")
    assert first.report.operation == "install" and first.report.written
    assert sorted(first.files) == sorted(again.files)
    assert ".loopx" not in "".join(first.files)
    skill = next(text for rel, text in first.files.items() if rel.endswith("SKILL.md"))
    assert "demo" in skill and "builder" in skill
    assert "/opt/tools/loopx" in next(t for r, t in again.files.items() if r.endswith("SKILL.md"))
    assert all(str(tmp_path) not in text for text in (*first.files.values(), *again.files.values()))
"""


@pytest.fixture
def session(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A pytester folder with the author's conftest (no plugin autoload: a bare pytest starts faster)."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makeconftest(CONFTEST)
    return pytester


def run(session: pytest.Pytester) -> pytest.HookRecorder:
    """The session's tests, in-process."""
    return session.inline_run("-p", "no:cacheprovider", "-W", "ignore::pytest.PytestAssertRewriteWarning")


def test_the_ini_names_the_host_and_render_gives_the_files(session: pytest.Pytester) -> None:
    session.makeini("[pytest]\nloopx_host = toy\n")
    session.makepyfile(test_author=AUTHOR_TESTS)
    recorder = run(session)
    passed, _skipped, failed = recorder.listoutcomes()
    assert [r.nodeid for r in failed] == [] and len(passed) == 2, [str(r.longrepr) for r in failed]


def test_no_host_named_anywhere_fails_with_how_to_name_it(session: pytest.Pytester) -> None:
    session.makepyfile(test_author="def test_cases(loopx_cases):\n    pass\n")
    recorder = run(session)
    passed, _skipped, failed = recorder.listoutcomes()
    assert passed == [] and len(failed) == 1
    assert "name the host: `host = ...` on the test class or `loopx_host = ...` in the pytest ini" in str(
        failed[0].longrepr
    )
