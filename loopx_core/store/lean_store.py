"""`LeanSettleStore`: the file store of the settlement commands, reading and writing lean objects.

`turn begin`, `writeback`, `quota spend --turn-key` and `todo complete` run once a turn in
every host, and pydantic's import and model builds cost them ~60 ms, filelock's 5-8 ms. This
store is a `FileStore` (same files, paths, locks, errors and algorithms) whose reads give the
objects of `loopx_core.models.lean` (store/lean.py: pydantic judges any doubt) and whose
writes take them, and whose lock is filelock's own `flock` without filelock (store/lock.py).

Every write goes through `store.lean_encode`: the generated lean writer's bytes, read back by
the generated lean checker; on any doubt pydantic judges (it validates the object and its own
`model_dump_json(indent=2)` is written, or its refusal is raised), so this store never writes
what the pydantic store would not, and what both write is the same bytes
(tests/test_lean_store_bytes.py). A pydantic model given to it is written as `FileStore` writes it.

Open it with `LeanSettleStore(root)` (a `Path` or a string), or `open_settle_store(root)` for whatever
store the project chose: this one for files, `LeanSettlePostgresStore` for PostgreSQL.
"""

from __future__ import annotations

import os

from loopx_core.ids import check_id
from loopx_core.models import lean
from loopx_core.models.identity import check_turn_key
from loopx_core.store import lean as lean_reads
from loopx_core.store.files import FileLayout, FileStore
from loopx_core.store.lean_encode import encode, encode_event, encode_history
from loopx_core.store.ledger import reverse_lines
from loopx_core.store.lock import flock_lock
from loopx_core.store.roots import STATE_DIR

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from contextlib import AbstractContextManager
    from pathlib import Path
    from typing import Any

    from loopx_core.datetimes import datetime


class LeanSettleStore(FileStore):
    """A `FileStore` whose reads give lean objects and whose writes take them (same bytes).

    Its paths are strings (`FileLayout`'s), so a settlement command needs no pathlib (~3 ms):
    `root` is a `Path` only when asked for (a validation command's folder, a notice).
    """

    models: Any = lean
    """New records are lean objects: `store.models.TurnJournal(...)` builds the lean twin."""
    _lean_events = True

    def __init__(self, root: Path | str) -> None:
        text = os.fspath(root)
        self._base = text
        self._path: Path | None = None
        self.state_dir = os.path.join(text, STATE_DIR)  # type: ignore[assignment]
        self._reads = lean_reads.LeanFileStore(FileLayout(text))

    @property  # type: ignore[override]
    def root(self) -> Path:
        """The project folder as a `Path` (pathlib loads on first use)."""
        if self._path is None:
            from pathlib import Path

            self._path = Path(self._base)
        return self._path

    # -- paths: FileStore's, as strings (FileLayout's; tests/test_lean_store.py compares them)
    @property
    def registry_path(self) -> str:  # type: ignore[override]
        """`.loopx/registry.json`."""
        return os.path.join(self.state_dir, "registry.json")

    def goal_dir(self, goal_id: str) -> str:  # type: ignore[override]
        """`.loopx/goals/<goal>/` (the id is checked, so it stays inside `.loopx/`)."""
        return os.path.join(self.state_dir, "goals", check_id("goal", goal_id))

    def goal_path(self, goal_id: str) -> str:  # type: ignore[override]
        """`.loopx/goals/<goal>/state.json`."""
        return os.path.join(self.goal_dir(goal_id), "state.json")

    def ledger_path(self, goal_id: str) -> str:  # type: ignore[override]
        """`.loopx/goals/<goal>/events.jsonl`."""
        return os.path.join(self.goal_dir(goal_id), "events.jsonl")

    def turn_path(self, goal_id: str, turn_key: str) -> str:  # type: ignore[override]
        """`.loopx/goals/<goal>/turns/<64 hex>.json` (the turn key is checked)."""
        return os.path.join(self.goal_dir(goal_id), "turns", f"{check_turn_key(turn_key)}.json")

    def runs_dir(self, goal_id: str) -> str:  # type: ignore[override]
        """`.loopx/goals/<goal>/runs/`."""
        return os.path.join(self.goal_dir(goal_id), "runs")

    def receipts_path(self, goal_id: str) -> str:  # type: ignore[override]
        """`.loopx/goals/<goal>/receipts.json`."""
        return os.path.join(self.goal_dir(goal_id), "receipts.json")

    def scheduler_path(self, goal_id: str) -> str:  # type: ignore[override]
        """`.loopx/goals/<goal>/scheduler.json`."""
        return os.path.join(self.goal_dir(goal_id), "scheduler.json")

    def lock_path(self, name: str) -> str:  # type: ignore[override]
        """`.loopx/locks/<name>.lock` (the name is a checked id)."""
        return os.path.join(self.state_dir, "locks", f"{check_id('lock', name)}.lock")

    def init(self) -> bool:
        """`FileStore.init` (a new registry is written once a project, by the pydantic store)."""
        return FileStore(self.root).init()

    # -- the primitives FileStore's algorithms use
    def _lock(self, name: str) -> AbstractContextManager[None]:
        """The lock `name` through `flock` (no filelock import); the same lock filelock takes."""
        return flock_lock(self.lock_path(name))

    def _load(self, path: Path, name: str, *, what: str) -> Any:
        """The file as a lean `name` (pydantic judges a doubt), or `read_model`'s error."""
        return lean_reads.read_file(path, name, what=what, root=self._base)

    def _save(self, path: Path, record: Any) -> None:
        """Write `record` atomically as `encode` gives it."""
        from loopx_core.store.atomic import atomic_write_bytes

        atomic_write_bytes(path, encode(record))

    def _last_event(self, path: Path) -> Any:
        """The ledger's newest committed event (lean), or None."""
        for line in reverse_lines(path, root=self._base, what="ledger"):
            return lean_reads.parse_event(path, line, self._base)
        return None

    def _event_line(self, event: Any) -> bytes:
        """The ledger line of `event` (no newline)."""
        return encode_event(event)

    def _history_line(self, entry: Any) -> bytes:
        """The run history line of `entry` (no newline)."""
        return encode_history(entry)

    # -- reads not built on the primitives
    def read_scheduler(self, goal_id: str) -> Any:
        """The goal's scheduler state (lean; empty if no host reported yet)."""
        return self._reads.read_scheduler(goal_id)

    def ledger_since(self, goal_id: str, since: datetime) -> list[Any]:
        """Ledger events (lean) at or after `since`, oldest first, reading only the file's tail."""
        return self._reads.ledger_since(goal_id, since)  # type: ignore[no-any-return]

    def ledger_all(self, goal_id: str) -> list[Any]:
        """The whole ledger (lean), oldest first."""
        path = self.ledger_path(goal_id)
        events = [
            lean_reads.parse_event(path, line, self._base)
            for line in reverse_lines(path, root=self._base, what="ledger")
        ]
        events.reverse()
        return events

    def read_history(self, goal_id: str, *, last: int | None = None) -> list[Any]:
        """The run history (lean; only its `last` lines if given), oldest first."""
        return self._reads.read_history(goal_id, last=last)  # type: ignore[no-any-return]


def open_settle_store(root: Path | str) -> Any:
    """The store of the project at `root` for a settlement command, in lean objects: this store
    on files, the team store's lean twin (`postgres.lean_store`) on PostgreSQL. Given the root as
    a string (`roots.find_root_text`), a settlement command loads pathlib on neither: each store
    makes its root a `Path` only when one is asked for."""
    from loopx_core.store.choice import FILES, choose, open_target, take_begun

    begun = take_begun(os.fspath(root))
    target = begun[0] if begun is not None else choose(root).target  # chosen once, where it began
    if target == FILES:
        return LeanSettleStore(root)
    conn = begun[1] if begun is not None else None
    try:
        store = open_target(root, target, lean=True)
    except BaseException:
        if conn is not None:
            conn.close()  # nothing begun is left open
        raise
    if conn is not None:
        store.lean_link.adopt(conn)
    return store
