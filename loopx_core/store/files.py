"""`FileStore`: the embedded store, plain files under `<root>/.loopx/`.

Every file is read and written through the one codec (`loopx_core.models.codec`); finding the
project's root is `store/roots.py`.
"""

from __future__ import annotations

import json
import os
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from loopx_core.errors import ConflictError, NotFoundError, SchemaUnsupportedError, StateInvalidError
from loopx_core.faults import race_window
from loopx_core.ids import check_id
from loopx_core.models import codec
from loopx_core.models.constants import SCHEMA_VERSION
from loopx_core.models.identity import check_turn_key
from loopx_core.models.records import (
    GoalState,
    LedgerEvent,
    Registry,
    RunIndexEntry,
    SchedulerState,
    TurnJournal,
)
from loopx_core.store import ledger
from loopx_core.store.atomic import (
    atomic_write_bytes,
    fsync_dir,
    read_bytes,
    read_record,
    shown,
    unlink_missing,
    write_record,
)
from loopx_core.store.lock import file_lock
from loopx_core.store.roots import STATE_DIR

if TYPE_CHECKING:
    from collections.abc import Callable
    from contextlib import AbstractContextManager
    from datetime import datetime

    from loopx_core.store import receipts

T = TypeVar("T")

REGISTRY_LOCK = "registry"
GITIGNORE = """\
# Written by `loopx init`: what of .loopx/ must not be committed (see docs/committing.md).
# The registry, goal state, runs, ledger and facades.json are the loop's record: commit them.
locks/
backups/
quarantine/
notices/
*.prev
*.tmp
"""
"""`.loopx/.gitignore` as a new file store gets it (one already there is the project's own)."""


def write_gitignore(state_dir: Path) -> bool:
    """Write `state_dir/.gitignore` if `state_dir` is a real folder without one; True when written."""
    path = state_dir / ".gitignore"
    if not state_dir.is_dir() or state_dir.is_symlink() or path.exists() or path.is_symlink():
        return False
    atomic_write_bytes(path, GITIGNORE.encode())
    return True


def keep_previous(path: Path | str) -> None:
    """Keep the file about to be replaced (it was just read and validated) as `<name>.prev`.

    A hard link, so it costs two metadata operations; `loopx doctor --repair` restores it when
    the current file is found damaged. Best effort: a filesystem without links keeps none.
    """
    folder, name = os.path.split(path)
    prev = os.path.join(folder, name + ".prev")
    tmp = os.path.join(folder, f".{name}.prev.tmp")
    try:
        unlink_missing(tmp)
        os.link(path, tmp)
        os.replace(tmp, prev)
    except OSError:
        unlink_missing(tmp)


def not_initialized() -> NotFoundError:
    """The error for a root without LoopX state (no `.loopx/` there or in any folder above it)."""
    return NotFoundError(
        "no LoopX state here (no .loopx/ in this folder or any folder above it): "
        "run `loopx init` in the project first, or point --root (or LOOPX_ROOT) at the folder holding .loopx/"
    )


def _from_here(root: str) -> str:
    """The project root as the person at the shell names it: relative to the working folder when
    it is that folder, one above it or one inside it (`.`, `../..`, `sub/p`); any other (a
    `--root` elsewhere) by its own name, so a message never spells out the folders around it."""
    try:
        here = os.path.relpath(root)
    except (OSError, ValueError):  # no working folder (removed), or another drive
        return os.path.basename(root) or "."
    parts = here.split(os.sep)
    if os.pardir not in parts or all(part == os.pardir for part in parts):
        return here
    return os.path.basename(root) or "."


def require_registry(root: Path | str, state_dir: Path | str, registry: Path | str) -> None:
    """Raise what is wrong when `registry` is no regular file, saying where and what to do.

    No `.loopx/` at all is `not_initialized`; a `.loopx` that is a file, or a registry that is a
    FIFO, a folder, a device or a link to nothing, is invalid state (exit 4, `read_bytes`'s
    line); a `.loopx/` that holds no registry is `NotFoundError` naming that folder, so a stray
    empty `.loopx/` in a subfolder is not mistaken for no project at all.
    """
    if os.path.isfile(registry):
        return
    if os.path.exists(registry) or os.path.islink(registry):
        read_bytes(registry, what="registry", root=root)  # refuses it with the kind it is
        return  # replaced by a file meanwhile
    here = _from_here(os.fspath(root))
    shown_dir = STATE_DIR if here == "." else f"{here}/{STATE_DIR}"
    if os.path.exists(state_dir) and not os.path.isdir(state_dir):
        raise StateInvalidError(
            f"{shown_dir} is a file, not LoopX's folder: move it aside, then `loopx init` (or pass --root)",
            path=STATE_DIR,
        )
    if os.path.isdir(state_dir):
        raise NotFoundError(
            f"{shown_dir}/ holds no registry.json: restore it from a backup, run `loopx init` there "
            f"to start one (`loopx doctor` then lists goal folders it does not name), or remove that "
            "folder to use a project above it"
        )
    raise not_initialized()


class FileStore:
    """Registry, goal states and ledgers as files; every write atomic and locked."""

    label = "files"
    """The store as packets and `loopx status` name it."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self.state_dir = self.root / STATE_DIR

    # -- paths -------------------------------------------------------------------------
    @property
    def registry_path(self) -> Path:
        """`.loopx/registry.json`."""
        return self.state_dir / "registry.json"

    def goal_dir(self, goal_id: str) -> Path:
        """`.loopx/goals/<goal>/` (the id is checked, so it stays inside `.loopx/`)."""
        return self.state_dir / "goals" / check_id("goal", goal_id)

    def goal_path(self, goal_id: str) -> Path:
        """`.loopx/goals/<goal>/state.json`."""
        return self.goal_dir(goal_id) / "state.json"

    def ledger_path(self, goal_id: str) -> Path:
        """`.loopx/goals/<goal>/events.jsonl`."""
        return self.goal_dir(goal_id) / "events.jsonl"

    def turn_path(self, goal_id: str, turn_key: str) -> Path:
        """`.loopx/goals/<goal>/turns/<64 hex>.json` (the turn key is checked)."""
        return self.goal_dir(goal_id) / "turns" / f"{check_turn_key(turn_key)}.json"

    def runs_dir(self, goal_id: str) -> Path:
        """`.loopx/goals/<goal>/runs/`."""
        return self.goal_dir(goal_id) / "runs"

    def receipts_path(self, goal_id: str) -> Path:
        """`.loopx/goals/<goal>/receipts.json` (derived from the ledger and the run history)."""
        return self.goal_dir(goal_id) / "receipts.json"

    def scheduler_path(self, goal_id: str) -> Path:
        """`.loopx/goals/<goal>/scheduler.json`."""
        return self.goal_dir(goal_id) / "scheduler.json"

    def lock_path(self, name: str) -> Path:
        """`.loopx/locks/<name>.lock` (the name is a checked id, so it stays inside `.loopx/`)."""
        return self.state_dir / "locks" / f"{check_id('lock', name)}.lock"

    def _lock(self, name: str) -> AbstractContextManager[None]:
        """The lock `name` (a checked id)."""
        return file_lock(self.lock_path(name))

    # -- lifecycle ---------------------------------------------------------------------
    def is_initialized(self) -> bool:
        """True when `.loopx/registry.json` exists."""
        return os.path.isfile(self.registry_path)

    def init(self) -> bool:
        """Create `.loopx/.gitignore` (kept if present), then an empty registry.

        False (and nothing written) if a registry already exists.
        """
        if os.path.exists(self.state_dir) and not os.path.isdir(self.state_dir):
            require_registry(self.root, self.state_dir, self.registry_path)  # `.loopx` is a file
        with self._lock(REGISTRY_LOCK):
            if os.path.exists(self.registry_path) or os.path.islink(self.registry_path):
                require_registry(self.root, self.state_dir, self.registry_path)  # no file: refused
                return False
            self.state_dir.mkdir(parents=True, exist_ok=True)
            write_gitignore(self.state_dir)  # first: a store is initialised once its registry exists
            write_record(self.registry_path, Registry(schema_version=SCHEMA_VERSION))
            return True

    def _require_init(self) -> None:
        if not self.is_initialized():
            require_registry(self.root, self.state_dir, self.registry_path)

    # -- registry ----------------------------------------------------------------------
    def read_registry(self) -> Registry:
        """The registry, validated."""
        self._require_init()
        return read_record(self.registry_path, Registry, what="registry", root=self.root)

    def update_registry(self, change: Callable[[Registry], T]) -> T:
        """Apply `change` to the registry under its lock and write it back atomically."""
        self._require_init()
        with self._lock(REGISTRY_LOCK):
            registry = read_record(self.registry_path, Registry, what="registry", root=self.root)
            result = change(registry)
            race_window()
            keep_previous(self.registry_path)
            write_record(self.registry_path, registry)
            return result

    # -- goal state --------------------------------------------------------------------
    def read_goal(self, goal_id: str) -> GoalState:
        """A goal's state, validated (missing in a `.loopx/` without registry: that is said)."""
        try:
            path = self.goal_path(goal_id)
            return read_record(path, GoalState, what=f"state of goal {goal_id!r}", root=self.root)
        except (NotFoundError, StateInvalidError):
            self._require_init()  # a `.loopx` that is a file, or holds no registry: that is what is wrong
            raise

    def create_goal(self, state: GoalState) -> None:
        """Write a new goal's first state; refuses to overwrite an existing one."""
        with self._lock(state.goal_id):
            path = self.goal_path(state.goal_id)
            if os.path.exists(path):
                raise ConflictError(f"goal {state.goal_id!r} already has a state file")
            write_record(path, state)

    def update_goal(
        self, goal_id: str, change: Callable[[GoalState], T], *, expect_version: int | None = None
    ) -> T:
        """Compare-and-swap a goal's state under its lock; the version increments.

        `change` mutates the state in place and returns a result; if it raises, nothing
        is written.
        """
        with self._lock(goal_id):
            state = self.read_goal(goal_id)
            if expect_version is not None and state.version != expect_version:
                raise ConflictError(
                    f"goal {goal_id!r} moved: expected version {expect_version}, found {state.version}"
                )
            result = change(state)
            race_window()
            keep_previous(self.goal_path(goal_id))
            state.version += 1
            write_record(self.goal_path(goal_id), state)
            return result

    def goal_lock(self, goal_id: str) -> AbstractContextManager[None]:
        """The goal's lock (re-entrant in one process), for changes spanning several files."""
        return self._lock(check_id("goal", goal_id))

    def registry_lock(self) -> AbstractContextManager[None]:
        """The registry's lock (re-entrant in one process): a repair re-checks under it."""
        return self._lock(REGISTRY_LOCK)

    # -- scheduler ---------------------------------------------------------------------
    def read_scheduler(self, goal_id: str) -> SchedulerState:
        """The goal's scheduler state, validated (empty if no host reported yet)."""
        try:
            path = self.scheduler_path(goal_id)
            return read_record(path, SchedulerState, what="scheduler state", root=self.root)
        except NotFoundError:
            return SchedulerState(schema_version=SCHEMA_VERSION, goal_id=check_id("goal", goal_id))

    def write_scheduler(self, state: SchedulerState) -> None:
        """Write the goal's scheduler state atomically; call with the goal lock held."""
        write_record(self.scheduler_path(state.goal_id), state)

    # -- turn journals -----------------------------------------------------------------
    def read_journal(self, goal_id: str, turn_key: str) -> TurnJournal:
        """A turn journal, schema-checked (missing: NotFoundError; malformed: StateInvalidError)."""
        path = self.turn_path(goal_id, turn_key)
        return read_record(path, TurnJournal, what="turn journal", root=self.root)

    def read_journals(self, goal_id: str) -> list[TurnJournal]:
        """Every journal of the goal, by turn key (a malformed one: `StateInvalidError`)."""
        folder = self.goal_dir(check_id("goal", goal_id)) / "turns"
        names = sorted(p.name for p in folder.glob("*.json")) if folder.is_dir() else []
        return [
            read_record(folder / name, TurnJournal, what="turn journal", root=self.root) for name in names
        ]

    def has_journal(self, goal_id: str, turn_key: str) -> bool:
        """True when the turn has a journal (open or a tombstone)."""
        return os.path.exists(self.turn_path(goal_id, turn_key))

    def write_journal(self, journal: TurnJournal) -> None:
        """Write a journal atomically; call with the goal lock held."""
        write_record(self.turn_path(journal.goal_id, journal.turn_key), journal)

    # -- ledger ------------------------------------------------------------------------
    def append_event(
        self, goal_id: str, build: Callable[[int, LedgerEvent | None], LedgerEvent]
    ) -> LedgerEvent:
        """Append the event `build(next_seq, last_event)` returns, under the goal lock."""
        from loopx_core.store import receipts

        path = self.ledger_path(goal_id)
        with self._lock(goal_id):
            last = ledger.last_event(path, root=self.root)
            event = build((last.seq + 1) if last else 1, last)
            race_window()
            if last is not None and event.at < last.at:
                event = event.replace(at=last.at)  # keep the tail ordered by time
            ledger.append_line(path, codec.line(event, exclude_none=True))
            receipts.load(self._receipt_sources(goal_id), runs=False)  # index the new line now
            return event

    # -- receipts (exactly once for the goal's whole life) -----------------------------
    def _receipt_sources(self, goal_id: str) -> receipts.Sources:
        from loopx_core.store import receipts

        return receipts.Sources(
            self.receipts_path(goal_id),
            self.ledger_path(goal_id),
            os.path.join(self.runs_dir(goal_id), "index.jsonl"),
            self.root,
        )

    def spend_receipt(self, goal_id: str, turn_instance_id: str) -> LedgerEvent | None:
        """The spend already charged for this turn instance, however long ago (or None)."""
        from loopx_core.store import receipts

        with self.goal_lock(goal_id):
            return receipts.spend_of(self._receipt_sources(goal_id), turn_instance_id)

    def void_receipt(self, goal_id: str, event_id: str) -> LedgerEvent | None:
        """The void already recorded for `event_id` (or None)."""
        from loopx_core.store import receipts

        with self.goal_lock(goal_id):
            return receipts.void_of(self._receipt_sources(goal_id), event_id)

    def run_indexed(self, goal_id: str, run_id: str) -> bool:
        """True when the run history already lists `run_id`."""
        from loopx_core.store import receipts

        with self.goal_lock(goal_id):
            return receipts.run_indexed(self._receipt_sources(goal_id), run_id)

    # -- runs ------------------------------------------------------------------------------
    def record_run(self, goal_id: str, record: dict[str, Any], markdown: str, entry: RunIndexEntry) -> None:
        """Write `runs/<run>.json` and `.md` atomically, then add `entry` to the history once.

        The history is read before anything is written, so a damaged one refuses first; a
        retry after a crash between the record and its receipt rewrites the record only.
        """
        from loopx_core.store import receipts

        with self.goal_lock(goal_id):
            folder = self.runs_dir(goal_id)
            indexed = receipts.run_indexed(self._receipt_sources(goal_id), entry.run_id)
            text = json.dumps(record, indent=2, ensure_ascii=False) + "\n"
            atomic_write_bytes(os.path.join(folder, f"{entry.run_id}.json"), text.encode(), folder=False)
            atomic_write_bytes(os.path.join(folder, f"{entry.run_id}.md"), markdown.encode(), folder=False)
            fsync_dir(folder)  # both renames made durable at once, before the history names the run
            if indexed:
                return
            ledger.append_line(os.path.join(folder, "index.jsonl"), codec.line(entry))
            receipts.load(self._receipt_sources(goal_id), ledger=False)

    def ledger_since(self, goal_id: str, since: datetime) -> list[LedgerEvent]:
        """Ledger events at or after `since`, oldest first."""
        return ledger.read_tail(self.ledger_path(goal_id), since, root=self.root)

    def read_history(self, goal_id: str, *, last: int | None = None) -> list[RunIndexEntry]:
        """The run history (only its `last` lines if given), oldest first; read from the end.

        A damaged line is `StateInvalidError` naming the file.
        """
        path = os.path.join(self.runs_dir(check_id("goal", goal_id)), "index.jsonl")
        lines = list(islice(ledger.reverse_lines(path, root=self.root, what="run history"), last))
        lines.reverse()
        where = shown(path, self.root)
        return [
            codec.parse(line, RunIndexEntry, what="a line of the run history", where=where) for line in lines
        ]

    def read_run(self, goal_id: str, run_id: str) -> dict[str, Any]:
        """One run's full record, as written at its durable writeback."""
        check_id("run", run_id)
        path = os.path.join(self.runs_dir(check_id("goal", goal_id)), f"{run_id}.json")
        try:
            raw, where = read_bytes(path, what="run record", root=self.root)
        except NotFoundError:
            raise NotFoundError(f"run {run_id!r} not found in goal {goal_id!r}") from None
        try:
            data = codec.loads(raw)
        except (ValueError, RecursionError):
            raise StateInvalidError(f"run record {where} is unreadable or not JSON", path=where) from None
        if not isinstance(data, dict) or data.get("schema_version") != 1:
            raise SchemaUnsupportedError(f"run record {where} is not a schema 1 run record", path=where)
        return data

    def ledger_all(self, goal_id: str) -> list[LedgerEvent]:
        """The whole ledger, oldest first (for inspection, not the hot path)."""
        return ledger.read_all(self.ledger_path(goal_id), root=self.root)
