"""The file store read and written whole (for `loopx store migrate`).

Writes are the file store's own: every document atomically through `write_record`, each
ledger and history written in one atomic replace (a 100,000-event ledger is one write, not
100,000 appends), so the files equal those the store writes turn by turn, byte for byte.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from loopx_core.errors import NotFoundError, StateInvalidError
from loopx_core.ids import is_valid_id
from loopx_core.models import codec
from loopx_core.models.records import RunIndexEntry
from loopx_core.store import ledger
from loopx_core.store.atomic import atomic_write_bytes, read_bytes, write_record
from loopx_core.store.files import FileStore, write_gitignore
from loopx_core.store.snapshot import GoalDump, Snapshot, event_line, history_line


def read(store: FileStore) -> Snapshot:
    """Every record under `.loopx/` (a damaged one refuses the whole read: repair first)."""
    snapshot = Snapshot()
    if _present(store.registry_path):
        snapshot.registry = store.read_registry()
    goals = store.state_dir / "goals"
    folders = sorted(p for p in goals.iterdir() if p.is_dir()) if goals.is_dir() else []
    for folder in folders:
        if not is_valid_id(folder.name):
            continue
        snapshot.goals[folder.name] = _read_goal(store, folder.name)
    return snapshot


def _present(path: Path) -> bool:
    """Something stands at `path` (a link to nothing or a loop of links too): it is read, or refused."""
    return path.exists() or path.is_symlink()


def _read_goal(store: FileStore, goal_id: str) -> GoalDump:
    dump = GoalDump()
    if _present(store.goal_path(goal_id)):
        dump.state = store.read_goal(goal_id)
    dump.events = ledger.read_all(store.ledger_path(goal_id), root=store.root)
    turns = store.goal_dir(goal_id) / "turns"
    for path in sorted(turns.glob("*.json")) if turns.is_dir() else []:
        key = f"sha256:{path.stem}"
        dump.journals[key] = store.read_journal(goal_id, key)
    runs = store.runs_dir(goal_id)
    for path in sorted(runs.glob("*.json")) if runs.is_dir() else []:
        try:  # read_bytes: what is not a regular file (or is enormous) is refused, never read
            record = codec.loads(read_bytes(path, what="run record", root=store.root)[0])
            markdown = read_bytes(path.with_suffix(".md"), what="run record", root=store.root)[0].decode()
        except NotFoundError as exc:
            where = f"goals/{goal_id}/runs/{path.with_suffix('.md').name}"
            raise StateInvalidError(exc.message, path=where) from None
        except (OSError, ValueError) as exc:
            where = f"goals/{goal_id}/runs/{path.name}"
            raise StateInvalidError(f"run record {where} is unreadable: {exc}", path=where) from None
        dump.runs[path.stem] = (record, markdown)
    history = runs / "index.jsonl"
    for line in reversed(list(ledger.reverse_lines(history, root=store.root, what="run history"))):
        try:
            dump.history.append(codec.parse(line, RunIndexEntry, what="a line of the run history", where=""))
        except StateInvalidError:
            where = f"goals/{goal_id}/runs/index.jsonl"
            raise StateInvalidError(
                f"a line of {where} is damaged: repair the history before moving the store", path=where
            ) from None
    if _present(store.scheduler_path(goal_id)):
        dump.scheduler = store.read_scheduler(goal_id)
    return dump


def clear(store: FileStore) -> None:
    """Remove the store's records (registry and goals); the machine's own files stay."""
    store.registry_path.unlink(missing_ok=True)
    shutil.rmtree(store.state_dir / "goals", ignore_errors=True)


def write(store: FileStore, snapshot: Snapshot) -> None:
    """Write every record of `snapshot` into an empty file store."""
    for goal_id, dump in snapshot.goals.items():
        if dump.state is not None:
            write_record(store.goal_path(goal_id), dump.state)
        if dump.events:
            text = "".join(event_line(e) + "\n" for e in dump.events)
            atomic_write_bytes(store.ledger_path(goal_id), text.encode())
        for journal in dump.journals.values():
            write_record(store.turn_path(goal_id, journal.turn_key), journal)
        runs = store.runs_dir(goal_id)
        for run_id, (record, markdown) in dump.runs.items():
            text = json.dumps(record, indent=2, ensure_ascii=False) + "\n"
            atomic_write_bytes(runs / f"{run_id}.json", text.encode())
            atomic_write_bytes(runs / f"{run_id}.md", markdown.encode())
        if dump.history:
            text = "".join(history_line(e) + "\n" for e in dump.history)
            atomic_write_bytes(runs / "index.jsonl", text.encode())
        if dump.scheduler is not None:
            write_record(store.scheduler_path(goal_id), dump.scheduler)
    if snapshot.registry is not None:  # last: a store is initialised once its registry exists
        store.state_dir.mkdir(parents=True, exist_ok=True)
        write_gitignore(store.state_dir)  # as `FileStore.init` writes it (an existing one is kept)
        write_record(store.registry_path, snapshot.registry)


__all__ = ["clear", "read", "write"]
