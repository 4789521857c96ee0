"""State checks: damaged or unsupported files, torn ledger tails, turns and journals, leases.

Works through the `Store` protocol; the checks that read files directly (torn tails, orphan
journals, quarantine) run on the file store only.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from loopx_core.doctor import stored
from loopx_core.doctor.findings import Finding
from loopx_core.doctor.quarantine import cut_torn_tail, previous, quarantine, restore
from loopx_core.errors import LoopxError, NotFoundError, SchemaUnsupportedError, StateInvalidError
from loopx_core.models.records import GoalState, Registry, TurnJournal
from loopx_core.settlement.turns import cancel_turn
from loopx_core.store.atomic import MAX_APPENDED_BYTES, NotAFileError, open_stored, read_record
from loopx_core.store.base import Store
from loopx_core.store.files import FileStore


def check_state(store: Store, now: datetime) -> list[Finding]:
    """Every state finding of the project."""
    files = store if isinstance(store, FileStore) else None
    try:
        registry = store.read_registry()
    except SchemaUnsupportedError as exc:
        return [_unsupported(exc, {"file": ".loopx/registry.json"})]
    except StateInvalidError as exc:
        return [_registry(files, exc)]
    found: list[Finding] = []
    for goal_id in registry.goals:
        found += _goal(store, files, goal_id, now)
    if files is not None:
        found += stored.check_unregistered(files, set(registry.goals))
    return found


def _unsupported(exc: StateInvalidError, subject: dict[str, str]) -> Finding:
    return Finding(
        "schema_unsupported",
        exc.message,
        subject,
        hint="upgrade loopx to the release that wrote it (the file is left unchanged)",
    )


def _registry(files: FileStore | None, exc: StateInvalidError) -> Finding:
    finding = Finding(
        "registry_corrupt",
        exc.message,
        {"file": ".loopx/registry.json"},
        hint="restore .loopx/registry.json from a backup (nothing else can rebuild the goal index)",
    )
    if files is not None and previous(files.registry_path, Registry) is not None:
        path = files.registry_path

        def fix() -> str:
            with files.registry_lock():  # checked again under the lock every registry change takes
                if _reads(lambda: files.read_registry()):
                    return NOW_FINE.format(what="the registry")
                kept = previous(path, Registry)
                if kept is None:
                    return "no previous good version is kept now: restore the registry from a backup"
                moved = quarantine(files.root, path, _now(), exc.message)
                restore(path, kept)
            return (
                f"moved the damaged registry to {moved}; restored the previous good version (the last "
                "change to the registry may be lost: compare with the quarantined copy)"
            )

        finding.fix = fix
    return finding


NOW_FINE = "{what} reads fine now (a command wrote it since the check): nothing to repair"
"""What a repair says when its finding no longer stands under the lock it repairs with."""


def _reads(read: Callable[[], object]) -> bool:
    """True when `read` succeeds now (a repair's finding checked again under its lock)."""
    try:
        read()
    except LoopxError:
        return False
    return True


def _now() -> datetime:
    from loopx_core.clock import now

    return now()


def _goal(store: Store, files: FileStore | None, goal_id: str, now: datetime) -> list[Finding]:
    found: list[Finding] = []
    try:
        state = store.read_goal(goal_id)
    except SchemaUnsupportedError as exc:
        return [_unsupported(exc, {"goal_id": goal_id})]
    except (StateInvalidError, NotFoundError) as exc:
        return [_corrupt_state(files, goal_id, exc)]
    found += _scheduler(store, files, goal_id)
    if files is not None:
        found += _torn_tails(files, goal_id)
        found += stored.check_receipts(files, goal_id)
        found += stored.check_turn_files(files, goal_id)
    found += _appended(store, files, goal_id)
    found += _turns(store, files, goal_id, state, now)
    found += _leases(store, goal_id, state, now)
    found += [
        Finding(
            "health_recorded",
            f"{h.code}: {h.message}",
            {"goal_id": goal_id, "finding": h.code},
            hint=f"mend it, then `loopx health clear --goal-id {goal_id} --code {h.code}`",
        )
        for h in state.health
        if h.severity == "high"
    ]
    return found


def _corrupt_state(files: FileStore | None, goal_id: str, exc: LoopxError) -> Finding:
    missing = isinstance(exc, NotFoundError)
    finding = Finding(
        "state_corrupt",
        exc.message,
        {"goal_id": goal_id, "file": f".loopx/goals/{goal_id}/state.json"},
        hint="restore the goal's state.json from a backup (a quarantined copy is under .loopx/quarantine/)",
    )
    if files is None:
        return finding
    path = files.goal_path(goal_id)
    kept = previous(path, GoalState)
    if missing and kept is None:
        return finding

    def fix() -> str:
        with files.goal_lock(goal_id):
            if _reads(lambda: files.read_goal(goal_id)):
                return NOW_FINE.format(what=f"goal {goal_id}'s state")
            said = []
            if path.exists() or path.is_symlink():
                said.append(f"moved the damaged state to {quarantine(files.root, path, _now(), exc.message)}")
            good = previous(path, GoalState)
            if isinstance(good, GoalState):
                good.version += 2  # past the version that was lost: a stale compare-and-swap fails
                restore(path, good)
                said.append(
                    "restored the previous good version (its last change may be lost: compare with the "
                    "quarantined copy)"
                )
            else:
                said.append("no previous good version is kept: the goal stays blocked_health until restored")
            return "; ".join(said)

    finding.fix = fix
    return finding


def _scheduler(store: Store, files: FileStore | None, goal_id: str) -> list[Finding]:
    try:
        store.read_scheduler(goal_id)
    except StateInvalidError as exc:
        reason = exc.message
        finding = Finding(
            "state_corrupt",
            reason,
            {"goal_id": goal_id, "file": f".loopx/goals/{goal_id}/scheduler.json"},
            hint="the scheduler file only caches what hosts reported: move it aside",
            plan="quarantine it (the next scheduler ack writes a new one; nothing else is lost)",
        )
        if files is not None and not isinstance(exc, SchemaUnsupportedError):
            path = files.scheduler_path(goal_id)

            def fix() -> str:
                with files.goal_lock(goal_id):
                    if _reads(lambda: files.read_scheduler(goal_id)):
                        return NOW_FINE.format(what="the scheduler file")
                    moved = quarantine(files.root, path, _now(), reason)
                return f"moved it to {moved}; the next scheduler ack writes a new one"

            finding.fix = fix
        return [finding]
    return []


def _torn(path: Path) -> bool:
    """True when the append-only file at `path` ends in a line with no newline (never acknowledged)."""
    try:  # open_stored: a FIFO never blocks; what is no file is `_appended`'s to report
        fd, size = open_stored(path, what="ledger", where=path.name, limit=MAX_APPENDED_BYTES)
    except (OSError, LoopxError):
        return False
    try:
        return size > 0 and os.pread(fd, 1, size - 1) != b"\n"
    except OSError:
        return False
    finally:
        os.close(fd)


def _torn_tails(files: FileStore, goal_id: str) -> list[Finding]:
    found = []
    for path in (files.ledger_path(goal_id), files.runs_dir(goal_id) / "index.jsonl"):
        if not _torn(path):
            continue
        shown = str(path.relative_to(files.root))
        if path.is_symlink():  # the file it names may lie outside .loopx/: never cut through a link
            found.append(
                Finding(
                    "ledger_torn_tail",
                    f"{shown} (a symbolic link) ends in a line that was never completed",
                    {"goal_id": goal_id, "file": shown},
                    hint=f"{shown} is a symbolic link: LoopX never writes through one; put the file itself there",
                )
            )
            continue

        def fix(path: Path = path) -> str:
            with files.goal_lock(goal_id):
                if not _torn(path):
                    return "the last line is whole now (an append finished it): nothing to cut"
                return f"cut the torn line off (kept as {cut_torn_tail(files.root, path, _now())})"

        found.append(
            Finding(
                "ledger_torn_tail",
                f"{shown} ends in a line that was never completed",
                {"goal_id": goal_id, "file": shown},
                fix=fix,
            )
        )
    return found


def _appended(store: Store, files: FileStore | None, goal_id: str) -> list[Finding]:
    found = []
    for what, read in (("ledger", store.ledger_all), ("run history", store.read_history)):
        try:
            read(goal_id)
        except NotAFileError as exc:
            if files is None:  # no file store: no path to name (never raised there)
                found.append(Finding("not_a_file", exc.message, {"goal_id": goal_id, "file": what}))
                continue
            path = files.ledger_path(goal_id) if what == "ledger" else files.runs_dir(goal_id) / "index.jsonl"
            found.append(stored.not_a_file(files, goal_id, path, exc))
        except SchemaUnsupportedError as exc:
            found.append(_unsupported(exc, {"goal_id": goal_id}))
        except StateInvalidError as exc:
            found.append(
                Finding(
                    "ledger_invalid",
                    exc.message,
                    {"goal_id": goal_id, "file": what},
                    hint="an acknowledged line is damaged: restore the file from a backup",
                )
            )
    return found


def _turns(
    store: Store, files: FileStore | None, goal_id: str, state: GoalState, now: datetime
) -> list[Finding]:
    found = []
    for agent_id, key in state.open_turns.items():
        try:
            store.read_journal(goal_id, key)
            continue
        except NotFoundError:
            message = f"agent {agent_id!r} has an open turn whose journal is gone"
        except StateInvalidError as exc:
            message = f"agent {agent_id!r}'s open turn journal is damaged: {exc.message}"
        found.append(_forget_turn(store, files, goal_id, agent_id, key, message))
    if files is None:
        return found
    named = set(state.open_turns.values())
    folder = files.goal_dir(goal_id) / "turns"
    with contextlib.suppress(OSError):
        for path in sorted(folder.glob("*.json")):
            key = f"sha256:{path.stem}"
            if key in named:
                continue
            try:  # read_bytes: a FIFO or a device is refused, never read (check_turn_files reports it)
                journal = read_record(path, TurnJournal, what="turn journal")
            except (LoopxError, OSError, ValueError):
                continue  # a damaged tombstone: inspection reports it, nothing depends on it
            if journal.status in ("open", "failed"):
                found.append(_orphan(store, goal_id, journal))
    return found


def _forget_turn(
    store: Store, files: FileStore | None, goal_id: str, agent_id: str, key: str, message: str
) -> Finding:
    def fix() -> str:
        with store.goal_lock(goal_id):
            if store.read_goal(goal_id).open_turns.get(agent_id) != key:
                return f"the open turn of {agent_id} is cleared already: nothing to repair"
            if _reads(lambda: store.read_journal(goal_id, key)):
                return NOW_FINE.format(what=f"the journal of {agent_id}'s open turn")
            said = ""
            if files is not None:
                path = files.turn_path(goal_id, key)
                if path.exists():
                    said = f"moved the damaged journal to {quarantine(files.root, path, _now(), message)}; "
            cancel_turn(store, goal_id, agent_id, key, _now(), "cleared by loopx doctor")
        return said + f"cleared the open turn of {agent_id} (it may begin again)"

    return Finding(
        "open_turn_without_journal",
        message,
        {"goal_id": goal_id, "agent_id": agent_id, "turn_key": key},
        fix=fix,
    )


def _orphan(store: Store, goal_id: str, journal: TurnJournal) -> Finding:
    def fix() -> str:
        with store.goal_lock(goal_id):  # `turn begin` writes the journal, then names it, under this lock
            if journal.turn_key in store.read_goal(goal_id).open_turns.values():
                return "an open turn names the journal now (its turn had just begun): nothing to repair"
            if store.read_journal(goal_id, journal.turn_key).status not in ("open", "failed"):
                return "the journal is settled or stopped already: nothing to repair"
            cancel_turn(
                store, goal_id, journal.agent_id, journal.turn_key, _now(), "orphan stopped by loopx doctor"
            )
        return "stopped the journal (a tombstone now)"

    return Finding(
        "orphan_journal",
        f"a {journal.status} journal of {journal.agent_id!r} that no open turn names",
        {"goal_id": goal_id, "agent_id": journal.agent_id, "turn_key": journal.turn_key},
        fix=fix,
    )


def _leases(store: Store, goal_id: str, state: GoalState, now: datetime) -> list[Finding]:
    found = []
    turning = set()
    for agent_id, key in state.open_turns.items():
        with contextlib.suppress(LoopxError):
            turning.add((agent_id, store.read_journal(goal_id, key).identity.get("todo_id")))
    for todo in state.todos:
        expired = todo.lease_expires_at is not None and todo.lease_expires_at < now
        if todo.status != "claimed" or not expired or (todo.claimed_by, todo.todo_id) in turning:
            continue
        holder, todo_id = todo.claimed_by, todo.todo_id

        def fix(holder: str | None = holder, todo_id: str = todo_id) -> str:
            def change(s: GoalState) -> bool:
                t = s.todo(todo_id)
                if t is None or t.status != "claimed" or t.claimed_by != holder:
                    return False
                t.end_claim("open", _now())
                return True

            released = store.update_goal(goal_id, change)
            return "released the claim: the todo is open" if released else "already released"

        found.append(
            Finding(
                "lease_expired",
                f"todo {todo_id} is still claimed by {holder} after its lease expired",
                {"goal_id": goal_id, "todo_id": todo_id, "agent_id": holder or ""},
                fix=fix,
            )
        )
    return found
