"""Class: a facade is installed only for a goal and an agent the project has.

Observed: `workflow-skills --install -g nosuch -a nobody` succeeded; `doctor` then said Healthy
while every installed hook failed with "goal not found". Here every host and scope, with the
goal, the agent or both unknown to the project: exit 3 naming what is missing, one line, and
nothing written anywhere (project or home). A user-scope install made outside any project
(it serves the projects its host opens later) is not asked about a project.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.builders import demo_project, tree
from tests.conftest import run_loopx

SURFACES = ["claude-code", "codex-app", "dsh"]
UNKNOWN = {"goal": ("nosuch", "builder"), "agent": ("demo", "nobody"), "both": ("nosuch", "nobody")}


@pytest.mark.parametrize("surface", SURFACES)
@pytest.mark.parametrize("scope", ["project", "user"])
@pytest.mark.parametrize("which", sorted(UNKNOWN))
def test_an_unknown_goal_or_agent_is_refused_and_nothing_is_written(
    tmp_path: Path, surface: str, scope: str, which: str
) -> None:
    root = demo_project(tmp_path / "p")
    home = Path(os.environ["HOME"])
    before = (tree(root), tree(home))
    goal, agent = UNKNOWN[which]
    out = run_loopx(
        "workflow-skills",
        "--install",
        "--surface",
        surface,
        "--scope",
        scope,
        "-g",
        goal,
        "-a",
        agent,
        root=root,
    )
    assert out.exit_code == 3, out.stderr
    line = out.stderr.strip()
    assert "\n" not in line and (goal if which != "agent" else agent) in line, line
    assert (tree(root), tree(home)) == before


def test_a_user_install_outside_any_project_is_not_asked_about_one(tmp_path: Path) -> None:
    nowhere = tmp_path / "nowhere"
    nowhere.mkdir()
    out = run_loopx(
        "workflow-skills", "--install", "--surface", "dsh", "--scope", "user", "-g", "later", "-a", "someone",
        root=nowhere, cwd=nowhere,
    )  # fmt: skip
    assert out.exit_code == 0, out.stderr
