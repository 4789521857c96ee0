"""LoopX as a user installs a Python tool: a wheel and an sdist that pass `twine check`, the wheel
installed into a fresh environment of its own (what `pipx install` / `uv tool install` make: a
venv for the tool, its script on PATH, no editable install), then the README's first steps and
`loopx mcp serve` answering a tool call from that environment alone."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from loopx_core import __version__
from tests.conftest import REPO
from tests.mcpclient import Tools
from tests.wheels import clean_env, sh

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel and the sdist, built as a release would be (isolated build, hatchling)."""
    out = tmp_path_factory.mktemp("dist")
    sh(sys.executable, "-m", "build", "--wheel", "--sdist", "--outdir", out, REPO)
    return out


def test_wheel_and_sdist_pass_twine_check(dist: Path) -> None:
    (wheel,) = dist.glob("loopx_kit-*.whl")
    (sdist,) = dist.glob("loopx_kit-*.tar.gz")
    assert (
        wheel.name.startswith(f"loopx_kit-{__version__}-") and sdist.name == f"loopx_kit-{__version__}.tar.gz"
    )
    checked = sh(sys.executable, "-m", "twine", "check", "--strict", wheel, sdist)
    assert checked.count("PASSED") == 2, checked
    names = sh(sys.executable, "-m", "tarfile", "-l", sdist)
    for part in ("CHANGELOG.md", "README.md", "docs/troubleshooting.md", "loopx_core/cli/app.py"):
        assert part in names, part


def test_the_wheel_installed_as_a_tool_runs_the_first_steps_and_mcp(dist: Path, tmp_path: Path) -> None:
    (wheel,) = dist.glob("loopx_kit-*.whl")
    tool = tmp_path / "tools/loopx"  # the tool's own environment, as pipx and uv make one
    sh(sys.executable, "-m", "venv", tool)
    sh(tool / "bin/python", "-m", "pip", "install", "--quiet", wheel)
    bin_dir = tmp_path / "bin"  # what pipx/uv put on PATH: a link to the tool's script only
    bin_dir.mkdir()
    (bin_dir / "loopx").symlink_to(tool / "bin/loopx")
    env = clean_env(tmp_path, bin_dir)
    (tmp_path / "home").mkdir()
    project = tmp_path / "project"
    project.mkdir()

    def loopx(*args: str) -> str:
        return sh("loopx", *args, cwd=project, env=env)

    assert loopx("--version").strip() == f"loopx {__version__}"
    where = sh(
        tool / "bin/python", "-c", "import loopx_core; print(loopx_core.__file__)", cwd=project, env=env
    )
    assert Path(where.strip()).is_relative_to(tool)  # the wheel's copy, not this checkout
    assert json.loads(loopx("init"))["created"] is True
    assert (project / ".loopx/.gitignore").is_file()
    loopx("goal", "add", "--goal-id", "parser", "--objective", "Ship a tested parser", "--compute", "0.5")
    loopx("agent", "register", "--agent-id", "builder", "--capability", "python")
    loopx("todo", "add", "--goal-id", "parser", "--title", "Write the tokenizer", "--capability", "python")
    packet = json.loads(loopx("quota", "should-run", "--goal-id", "parser", "--agent-id", "builder"))
    assert (packet["decision"], packet["selected_todo"]["todo_id"]) == ("run", "t1")
    assert loopx("status", "--format", "markdown").startswith("Store: files")

    async def ask() -> dict[str, Any]:
        server = StdioServerParameters(
            command=str(bin_dir / "loopx"), args=["mcp", "serve"], env=env, cwd=str(project)
        )
        async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await Tools(session)("quota_should_run", goal_id="parser", agent_id="builder")

    answer = anyio.run(ask)
    assert answer["decision"] == "run" and answer["goal_id"] == "parser"


def test_readme_first_lines_install_loopx_as_a_tool() -> None:
    head = (REPO / "README.md").read_text().split("\n## ")[0]
    assert re.search(r"pipx install \S+", head) and re.search(r"uv tool install \S+", head)
    changelog = (REPO / "CHANGELOG.md").read_text()
    assert f"## {__version__}" in changelog
