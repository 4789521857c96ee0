"""User-scope files are shared by every project of a user: each goal/agent pair records the
project it was installed for, and a command in another project never re-points it.

Generated: any sequence of installs from several projects, then `--check`, `doctor` and
`doctor --repair` run in each project, leave every automation pointing at the project that
installed it, and report no drift.
"""

from __future__ import annotations

import json
import os
import shutil
import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.builders import build_project
from tests.conftest import run_loopx

AGENTS = ("builder", "other")


def _automation(agent: str, goal: str = "g") -> Path:
    return Path(os.environ["CODEX_HOME"]) / "automations" / f"loopx-{goal}-{agent}" / "automation.toml"


def _cwds(agent: str) -> list[str]:
    return tomllib.loads(_automation(agent).read_text())["cwds"]


def _install(root: Path, agent: str, *extra: str) -> object:
    return run_loopx(
        "workflow-skills", "--install", "--surface", "codex-app", "--scope", "user",
        "-g", "g", "-a", agent, "-f", "json", *extra, root=root, cwd=root,
    )  # fmt: skip


@pytest.fixture
def two_projects(tmp_path: Path) -> tuple[Path, Path]:
    roots = (tmp_path / "a", tmp_path / "b")
    for root in roots:
        build_project(root, agents=AGENTS)
    return roots


def test_doctor_in_another_project_leaves_the_automation_alone(two_projects: tuple[Path, Path]) -> None:
    a, b = two_projects
    assert _install(a, "builder").exit_code == 0
    before = _automation("builder").read_bytes()
    checked = run_loopx("doctor", "-f", "json", root=b, cwd=b)
    assert "facade_drift" not in checked.stdout, checked.stdout
    repaired = run_loopx("doctor", "--repair", "-f", "json", root=b, cwd=b)
    assert repaired.exit_code == 0, repaired.stdout + repaired.stderr
    assert _automation("builder").read_bytes() == before
    assert _cwds("builder") == [str(a.resolve())]
    again = run_loopx("doctor", "-f", "json", root=a, cwd=a)
    assert "facade_drift" not in again.stdout, again.stdout


def test_check_from_another_project_sees_no_drift(two_projects: tuple[Path, Path]) -> None:
    a, b = two_projects
    assert _install(a, "builder").exit_code == 0
    for root in (a, b):
        check = run_loopx(
            "workflow-skills", "--check", "--surface", "codex-app", "--scope", "user", "-f", "json",
            root=root, cwd=root,
        )  # fmt: skip
        assert check.exit_code == 0, check.stdout + check.stderr


def test_a_pair_another_project_owns_is_refused_then_moved_with_force(
    two_projects: tuple[Path, Path],
) -> None:
    a, b = two_projects
    assert _install(a, "builder").exit_code == 0
    taken = _install(b, "builder")
    assert taken.exit_code == 5, taken.stdout + taken.stderr
    assert "another project" in taken.stderr and str(a) not in taken.stderr
    assert _cwds("builder") == [str(a.resolve())]
    moved = _install(b, "builder", "--force")
    assert moved.exit_code == 0, moved.stderr
    assert _cwds("builder") == [str(b.resolve())]


def test_each_project_keeps_its_own_pair(two_projects: tuple[Path, Path]) -> None:
    a, b = two_projects
    assert _install(a, "builder").exit_code == 0
    assert _install(b, "other").exit_code == 0
    assert _install(a, "builder").exit_code == 0  # a re-install from A re-renders B's pair for B
    assert _cwds("builder") == [str(a.resolve())]
    assert _cwds("other") == [str(b.resolve())]
    manifest = json.loads((Path(os.environ["HOME"]) / ".loopx" / "facades.json").read_text())
    projects = {p["agent_id"]: p["project"] for p in manifest["installs"]["codex-app"]["pairs"]}
    assert projects == {"builder": str(a.resolve()), "other": str(b.resolve())}


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    steps=st.lists(
        st.tuples(st.sampled_from("ab"), st.sampled_from((*AGENTS, "check", "repair"))), max_size=6
    )
)
def test_generated_sequences_keep_every_automation_with_its_installer(
    two_projects: tuple[Path, Path], steps: list[tuple[str, str]]
) -> None:
    roots = dict(zip("ab", two_projects, strict=True))
    owner: dict[str, Path] = {}
    home = Path(os.environ["HOME"])
    for folder in (home / ".loopx", home / ".agents", Path(os.environ["CODEX_HOME"])):
        shutil.rmtree(folder, ignore_errors=True)  # each example starts from a user with nothing installed
    for where, what in steps:
        root = roots[where]
        if what == "check":
            run_loopx("doctor", "-f", "json", root=root, cwd=root)
        elif what == "repair":
            run_loopx("doctor", "--repair", "-f", "json", root=root, cwd=root)
        elif what not in owner or owner[what] == root:
            assert _install(root, what).exit_code == 0
            owner[what] = root
        else:
            assert _install(root, what).exit_code == 5
        for agent, project in owner.items():
            assert _cwds(agent) == [str(project.resolve())], (steps, agent)


@settings(max_examples=60, deadline=None)
@given(project=st.one_of(st.text(max_size=30), st.text(max_size=30).map(lambda t: "/" + t)))
def test_a_recorded_project_is_an_absolute_path_of_printable_text(project: str) -> None:
    from loopx_core.errors import StateInvalidError
    from loopx_installer.manifest import Manifest

    home = Path(os.environ["HOME"])
    pair = {"goal_id": "g", "agent_id": "a", "installed_at_ms": 0, "project": project}
    data = {"schema_version": 2, "installs": {"codex-app": {"scope": "user", "pairs": [pair]}}}
    path = home / ".loopx" / "facades.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(data))
    fine = project.startswith("/") and not any(ord(c) < 32 or ord(c) == 127 for c in project)
    try:
        manifest = Manifest.open("user", None, [])
    except StateInvalidError as exc:
        assert not fine, exc.message
        assert "pairs.0.project" in exc.message
    else:
        assert fine and manifest.installs["codex-app"].pairs[0].project == project


def _manifest_path() -> Path:
    return Path(os.environ["HOME"]) / ".loopx" / "facades.json"


def _uninstall(root: Path, *extra: str) -> object:
    return run_loopx(
        "workflow-skills", "--uninstall", "--surface", "codex-app", "--scope", "user", "-f", "json", *extra,
        root=root, cwd=root,
    )  # fmt: skip


def test_a_pair_recorded_without_its_project_stays_as_written_until_named(
    two_projects: tuple[Path, Path],
) -> None:
    """A manifest from before LoopX kept each pair's project: doctor and --repair elsewhere leave
    the automation as LoopX wrote it; an install naming the pair adopts it."""
    a, b = two_projects
    assert _install(a, "builder").exit_code == 0
    data = json.loads(_manifest_path().read_text())
    for pair in data["installs"]["codex-app"]["pairs"]:
        del pair["project"]
    _manifest_path().write_text(json.dumps(data))
    before = _automation("builder").read_bytes()
    for args in (("doctor",), ("doctor", "--repair")):
        out = run_loopx(*args, "-f", "json", root=b, cwd=b)
        assert "facade_drift" not in out.stdout, out.stdout
    assert _automation("builder").read_bytes() == before
    assert _install(a, "builder").exit_code == 0
    pairs = json.loads(_manifest_path().read_text())["installs"]["codex-app"]["pairs"]
    assert [p["project"] for p in pairs] == [str(a.resolve())]


def test_another_projects_pair_is_not_removed_from_here(two_projects: tuple[Path, Path]) -> None:
    a, b = two_projects
    assert _install(a, "builder").exit_code == 0
    assert _install(b, "other").exit_code == 0
    for extra in (("-g", "g", "-a", "builder"), ()):
        refused = _uninstall(b, *extra)
        assert refused.exit_code == 5, refused.stdout + refused.stderr
        assert "installed for another project" in refused.stderr and str(a) not in refused.stderr
        assert _cwds("builder") == [str(a.resolve())]
    unknown = _uninstall(b, "-g", "zz", "-a", "zz")
    assert unknown.exit_code == 2 and "not installed here" in unknown.stderr
    assert _automation("builder").is_file() and _automation("other").is_file()
    assert _uninstall(b, "-g", "g", "-a", "other").exit_code == 0  # its own pair goes
    assert not _automation("other").exists() and _automation("builder").is_file()
    assert _uninstall(b, "--force").exit_code == 0  # everything, A's too, when forced
    assert not _automation("builder").exists()


def test_a_one_pair_host_is_not_taken_from_another_project(two_projects: tuple[Path, Path]) -> None:
    """Claude Code keeps one pair at user scope: B's install would replace A's hooks."""
    a, b = two_projects

    def install(root: Path, agent: str, *extra: str):  # type: ignore[no-untyped-def]
        return run_loopx(
            "workflow-skills", "--install", "--surface", "claude-code", "--scope", "user",
            "-g", "g", "-a", agent, "-f", "json", *extra, root=root, cwd=root,
        )  # fmt: skip

    assert install(a, "builder").exit_code == 0
    taken = install(b, "other")
    assert taken.exit_code == 5 and "installed for another project" in taken.stderr, taken.stderr
    assert install(b, "other", "--force").exit_code == 0


def test_a_moved_project_is_reported_and_its_new_folder_takes_the_pair_over(
    two_projects: tuple[Path, Path],
) -> None:
    a, b = two_projects
    assert _install(a, "builder").exit_code == 0
    moved = a.with_name("a2")
    a.rename(moved)
    found = json.loads(run_loopx("doctor", "-f", "json", root=b, cwd=b).stdout)["findings"]
    lost = [f for f in found if f["code"] == "facade_project_missing"]
    assert len(lost) == 1 and str(a) not in lost[0]["message"], found
    assert _install(moved, "builder").exit_code == 0
    assert _cwds("builder") == [str(moved.resolve())]
    found = json.loads(run_loopx("doctor", "-f", "json", root=b, cwd=b).stdout)["findings"]
    assert not [f for f in found if f["code"] == "facade_project_missing"]


def test_a_damaged_user_manifest_is_named_as_the_users(two_projects: tuple[Path, Path]) -> None:
    a, _ = two_projects
    _manifest_path().parent.mkdir(parents=True, exist_ok=True)
    _manifest_path().write_text("{")
    check = run_loopx(
        "workflow-skills", "--check", "--surface", "codex-app", "--scope", "user", root=a, cwd=a
    )
    assert check.exit_code == 4 and "~/.loopx/facades.json" in check.stderr, check.stderr
    doctor = json.loads(run_loopx("doctor", "-f", "json", root=a, cwd=a).stdout)["findings"]
    invalid = [f for f in doctor if f["code"] == "facade_manifest_invalid"]
    assert "--scope user" in invalid[0]["hint"] and "~/.loopx/facades.json" in invalid[0]["message"]
