"""File-store checks of what stands where a file should: kinds, sizes, and unnamed goal folders.

`not_a_file`: a receipt index, a turn journal, a ledger or a run history that is a FIFO, a
socket, a device, a folder (or a link to one, or to nothing) or over the size cap
(store/atomic.py). The registry, a goal state and a scheduler file are reported by their
own codes with the same line. `goal_unregistered`: a goal folder the registry does not name,
whose state every command passes over (a registry replaced or rewritten by hand).
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path

from loopx_core.doctor.findings import Finding
from loopx_core.doctor.quarantine import quarantine
from loopx_core.errors import LoopxError
from loopx_core.ids import is_valid_id
from loopx_core.store.atomic import NotAFileError, kind_of, read_bytes
from loopx_core.store.files import FileStore


def not_a_file(files: FileStore, goal_id: str, path: Path, exc: NotAFileError) -> Finding:
    """The finding for `path` (no regular file, or too big); its repair moves a non-file aside."""
    shown = str(path.relative_to(files.root))
    finding = Finding(
        "not_a_file",
        exc.message,
        {"goal_id": goal_id, "file": shown},
        hint=f"move {shown} aside (a file over the size cap is no file LoopX wrote: restore it from a backup)",
    )
    if _kind(path) is None and path.name != "receipts.json":
        return finding  # a regular file, too big: it may be the truth (a ledger), never moved by a repair

    def fix() -> str:
        with files.goal_lock(goal_id):
            if _kind(path) is None and path.name != "receipts.json":  # checked again under the lock
                return f"{shown} is a regular file now: nothing to move"
            moved = quarantine(files.root, path, _now(), exc.message)
        return f"moved it to {moved}" + (
            "; the receipt index is rebuilt at the next settlement" if path.name == "receipts.json" else ""
        )

    finding.fix = fix
    return finding


def _kind(path: Path) -> str | None:
    """What stands at `path` when it is no regular file (a link to nothing included), else None."""
    try:
        return kind_of(os.stat(path).st_mode)
    except FileNotFoundError:
        return "a symbolic link to nothing" if path.is_symlink() else None
    except OSError:
        return "unreadable"


def _now() -> datetime:
    from loopx_core.clock import now

    return now()


def check_receipts(files: FileStore, goal_id: str) -> list[Finding]:
    """The receipt index, when something other than a regular file of a sane size stands there."""
    path = files.receipts_path(goal_id)
    try:
        read_bytes(path, what="receipt index", root=files.root)
    except NotAFileError as exc:
        return [not_a_file(files, goal_id, path, exc)]
    except LoopxError:
        pass  # missing or damaged: rebuilt from the ledger at its next use
    return []


def check_turn_files(files: FileStore, goal_id: str) -> list[Finding]:
    """Every entry of the goal's `turns/` folder that is not a regular file (a journal's place)."""
    folder = files.goal_dir(goal_id) / "turns"
    found = []
    try:
        entries = sorted(folder.glob("*.json"))
    except OSError:
        return []
    for path in entries:
        try:
            read_bytes(path, what="turn journal", root=files.root)
        except NotAFileError as exc:
            found.append(not_a_file(files, goal_id, path, exc))
        except LoopxError:
            continue  # a damaged journal: the turn checks report it
    return found


def check_unregistered(files: FileStore, named: set[str]) -> list[Finding]:
    """Goal folders under `.loopx/goals/` that the registry does not name."""
    goals = files.state_dir / "goals"
    try:
        folders = sorted(p.name for p in goals.iterdir() if p.is_dir() and not p.is_symlink())
    except OSError:
        return []
    found = []
    for goal_id in folders:
        if goal_id in named or not is_valid_id(goal_id):
            continue
        has_state = (goals / goal_id / "state.json").is_file()
        found.append(
            Finding(
                "goal_unregistered",
                f"goal folder .loopx/goals/{goal_id}/ "
                + ("holds a state" if has_state else "exists")
                + " but the registry does not name it: no command sees that goal",
                {"goal_id": goal_id, "file": f".loopx/goals/{goal_id}"},
                hint=_hint(files, goal_id),
            )
        )
    return found


def _hint(files: FileStore, goal_id: str) -> str:
    """How to bring the goal back: from `registry.json.prev` when it names it, else a backup."""
    try:
        data, _ = read_bytes(files.registry_path.with_name("registry.json.prev"), what="previous registry")
        previous = json.loads(data)
        kept = isinstance(previous, dict) and goal_id in (previous.get("goals") or {})
    except (LoopxError, ValueError, RecursionError, TypeError):
        kept = False
    if kept:
        return (
            "the previous registry (.loopx/registry.json.prev) names it: compare the two, then copy it "
            "over .loopx/registry.json if it is the one to keep"
        )
    return (
        "restore .loopx/registry.json from a backup (or your version control) that names the goal; "
        "or move the folder aside if the goal is no longer wanted"
    )
