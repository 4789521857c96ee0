"""Class: a command moves a goal to a status that is not legal from the one it has.

Observed: `loopx goal stop` then `loopx goal resume` on a done (archived) goal made it active
again, as did a plain `resume`; `configure` rewrote a done goal. Now every command that writes
a goal's status (add, stop, resume, archive, configure; the dashboard's pause and resume use the
same operation) follows one graph (`ops.goals.MOVES`): stop and resume between active and
stopped, archive to done from either, done left only by `resume --reopen`. An illegal move is
one error line, exit 5 (conflict), nothing written; asking for the status a goal already has
changes nothing and writes nothing either.

Proved with generated command sequences over two goals through the CLI, against a model of the
graph written here independently of the code: each command's exit code and status, the status
on disk after it, and byte-identical files after every refused or idle command.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.errors import ConflictError
from loopx_core.ops import goals
from loopx_core.store.files import FileStore
from tests.builders import tree
from tests.conftest import T0, Cli, Project

COMMANDS = {
    "add": ["goal", "add", "-o", "Ship it"],
    "stop": ["goal", "stop"],
    "resume": ["goal", "resume"],
    "reopen": ["goal", "resume", "--reopen"],
    "archive": ["goal", "archive"],
    "configure": ["goal", "configure", "--compute", "0.5"],
    "configure-objective": ["goal", "configure", "-o", "Ship it again"],
}
LEGAL = {
    ("active", "stopped"),
    ("stopped", "active"),
    ("active", "done"),
    ("stopped", "done"),
    ("done", "active"),  # --reopen only
}
"""Every status change a goal may make (a command may also leave it where it is)."""


def expected(status: str | None, command: str) -> tuple[int, str | None, bool]:
    """(exit code, status after, whether files change) for `command` on a goal in `status`."""
    if command == "add":
        return (0, "active", True) if status is None else (5, status, False)
    if status is None:
        return 3, None, False
    if command in ("configure", "configure-objective"):
        return (5, status, False) if status == "done" else (0, status, True)
    target = {"stop": "stopped", "resume": "active", "reopen": "active", "archive": "done"}[command]
    if status == "done" and command in ("stop", "resume"):
        return 5, status, False
    return 0, target, status != target


STEP = st.tuples(st.sampled_from(sorted(COMMANDS)), st.sampled_from(["g", "h"]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(STEP, min_size=1, max_size=12))
def test_every_status_change_follows_the_graph(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, steps: list[tuple[str, str]]
) -> None:
    with tempfile.TemporaryDirectory(dir=tmp_path) as folder:
        root = Path(folder)
        FileStore(root).init()
        cli = Cli(root, monkeypatch)
        model: dict[str, str | None] = {"g": None, "h": None}
        for command, goal in steps:
            before = tree(root / ".loopx")
            code, status, writes = expected(model[goal], command)
            result = cli(*COMMANDS[command], "-g", goal, "-f", "json")
            assert result.exit_code == code, (command, model[goal], result.stderr)
            after = tree(root / ".loopx")
            if code == 0:
                assert result.json()["status"] == status  # type: ignore[index]
            else:
                assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("loopx: error: ")
            if not writes:
                assert after == before, (command, model[goal])
            if model[goal] is not None and status != model[goal]:
                assert (model[goal], status) in LEGAL
            model[goal] = status
            on_disk = {g: e.status for g, e in FileStore(root).read_registry().goals.items()}
            assert on_disk == {g: s for g, s in model.items() if s is not None}


def test_a_done_goal_is_reopened_only_on_request(cli: Cli) -> None:
    """The observed case: stop and resume no longer bring an archived goal back; --reopen does."""
    cli("goal", "add", "-g", "g", "-o", "Ship")
    assert cli("goal", "archive", "-g", "g").exit_code == 0
    for command in (["goal", "stop"], ["goal", "resume"], ["goal", "configure", "-o", "More"]):
        refused = cli(*command, "-g", "g", "-f", "human")
        assert refused.exit_code == 5 and "--reopen" in refused.stderr and refused.stdout == ""
    assert cli("goal", "show", "-g", "g", "-f", "json").json()["goal"]["status"] == "done"  # type: ignore[index]
    assert cli("goal", "resume", "-g", "g", "--reopen", "-f", "json").json()["status"] == "active"  # type: ignore[index]


def test_the_dashboard_pause_and_resume_follow_the_same_graph(project: Project) -> None:
    """The dashboard's owner actions call the same operation: a done goal refuses both, unwritten."""
    from loopx_core.dashboard import actions

    goals.add_goal(project.store, "g", "Ship", T0)
    goals.archive_goal(project.store, "g", T0)
    before = tree(project.root / ".loopx")
    for act in (actions.pause, actions.resume):
        with pytest.raises(ConflictError):
            act(project.store, "g", {}, T0)
    assert tree(project.root / ".loopx") == before
    assert goals.set_goal_status(project.store, "g", "active", T0, reopen=True).status == "active"
