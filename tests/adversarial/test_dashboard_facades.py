"""Class: an installed host facade, whole or damaged, makes the agents page fail.

The agents page lists each installed facade and its `--check` status through doctor's own
functions. With facades of all three hosts installed, and any one of their files damaged
(garbage, empty, wrong JSON shape, deleted, a folder in its place), the page is a 200 with
a row per facade: `ok`, or `drift` naming what drifted; never a 500 or a traceback.
Found: with any facade installed the page was a 500 (`ValueError`: doctor's rows had grown a
layout field, and the page unpacked four).
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.dashboard.app import create_app
from loopx_core.dashboard.security import Guard
from tests.browser import asgi, signed_in
from tests.conftest import Cli, Project

TOKEN = "h" * 24
HOSTS = ("claude-code", "codex-app", "dsh")
DAMAGES: dict[str, Callable[[Path, bytes], None]] = {
    "garbage": lambda p, junk: p.write_bytes(b"\xff" + junk),
    "empty": lambda p, _: p.write_bytes(b""),
    "wrong shape": lambda p, _: p.write_text("[]"),
    "deleted": lambda p, _: p.unlink(),
    "a folder": lambda p, _: (p.unlink(), p.mkdir()),
}


@pytest.fixture
def installed(project: Project, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The project with all three hosts' facades installed; the files they wrote."""
    # a project-scope facade goes into the project root (--root, else the nearest .loopx/ up)
    monkeypatch.chdir(project.root)
    before = {p for p in project.root.rglob("*") if p.is_file()}
    for host in HOSTS:
        result = Cli(project.root, monkeypatch)("workflow-skills", "--install", "-s", host, "-f", "json")
        assert result.exit_code == 0, result.stderr
    written = sorted(
        p for p in project.root.rglob("*") if p.is_file() and p not in before and ".loopx" not in p.parts
    )
    assert written
    return written


def rows(body: str) -> list[tuple[str, str]]:
    """(host, status) of each facade row on the agents page."""
    section = body.split('id="facades"', 1)[1]
    return re.findall(r"<tr><td>([a-z-]+)</td>.*?badge c-(\w+)", section)


def test_installed_facades_are_listed_ok(project: Project, installed: list[Path]) -> None:
    app = create_app(project.store, Guard(TOKEN, loopback_only=True))
    reply = asgi(app, "GET", "/agents", headers=signed_in(TOKEN))
    assert reply.status == 200, reply.body[-300:]
    assert sorted(rows(reply.body)) == [(h, "ok") for h in HOSTS]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(which=st.integers(0, 10**6), damage=st.sampled_from(sorted(DAMAGES)), junk=st.binary(max_size=20))
def test_a_damaged_facade_file_is_drift_on_the_page(
    project: Project, installed: list[Path], which: int, damage: str, junk: bytes
) -> None:
    target = installed[which % len(installed)]
    kept = target.read_bytes()
    DAMAGES[damage](target, junk)
    try:
        app = create_app(project.store, Guard(TOKEN, loopback_only=True))
        reply = asgi(app, "GET", "/agents", headers=signed_in(TOKEN))
        assert reply.status == 200, (target.name, damage, reply.body[-300:])
        assert "Traceback" not in reply.body and "internal error" not in reply.body
        found = rows(reply.body)
        assert sorted(h for h, _ in found) == sorted(HOSTS), found
        assert all(status in ("ok", "drift") for _, status in found), found
    finally:
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()
        target.write_bytes(kept)
