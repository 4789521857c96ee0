"""The dashboard's change watcher on a store that is neither the file store nor PostgreSQL.

A plugin's store is seen only through the `Store` protocol: its fingerprint is taken from the
registry, each goal's version and history length, and the heartbeats. It must stay the same
while nothing changes, change when a goal, the registry or a heartbeat changes, keep a damaged
goal in it as that goal's error (so the page, not the watcher, shows it), and through `safe_tokens`
an unreadable store has a fingerprint of its own instead of killing the watcher.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from loopx_core.dashboard.watch import fingerprinter, safe_tokens, tokener
from loopx_core.store.files import FileStore
from tests.conftest import Cli, Project


class ProtocolStore:
    """A store known only by the protocol's methods (here they read a real file store)."""

    def __init__(self, root: Path) -> None:
        self._files = FileStore(root)
        self.root = root

    def __getattr__(self, name: str) -> Any:
        return getattr(self._files, name)


def test_the_fingerprint_follows_goals_registry_and_heartbeats(cli: Cli, project: Project) -> None:
    take = fingerprinter(ProtocolStore(project.root))
    empty = take()
    assert take() == empty
    assert cli("goal", "add", "-g", "g", "-o", "Ship").exit_code == 0
    one_goal = take()
    assert one_goal != empty and take() == one_goal
    assert cli("todo", "add", "-g", "g", "--title", "Write it").exit_code == 0
    one_todo = take()
    assert one_todo != one_goal and take() == one_todo
    heartbeats = project.root / ".loopx/heartbeats"
    heartbeats.mkdir(exist_ok=True)
    (heartbeats / "builder.json").write_text("{}")
    assert take() not in (one_todo, one_goal, empty)


def test_a_damaged_goal_is_part_of_the_fingerprint_not_an_error(cli: Cli, project: Project) -> None:
    assert cli("goal", "add", "-g", "g", "-o", "Ship").exit_code == 0
    take = fingerprinter(ProtocolStore(project.root))
    healthy = take()
    project.state_file("g").write_text("{")
    damaged = take()
    assert damaged != healthy and take() == damaged
    project.state_file("g").write_text('{"schema_version": 99}')
    assert take() not in (damaged, healthy)


def test_an_unreadable_store_has_a_fingerprint_of_its_own(tmp_path: Path) -> None:
    (tmp_path / "bare").mkdir()
    take = safe_tokens(tokener(ProtocolStore(tmp_path / "bare")))
    assert take().registry == "error:NotFoundError" == take().registry
    assert take().goals == {}  # nothing a page may keep reads by
    (tmp_path / "bare/.loopx").write_text("a file where the state folder goes")
    assert take().registry == "error:StateInvalidError"
