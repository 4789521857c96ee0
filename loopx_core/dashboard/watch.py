"""Live updates: notice when the store changes, and tell every open page (server-sent events).

The store's `Tokens` are cheap to take and change whenever state does: one token for the
registry, one per goal, one for the heartbeats. The file store: the inode, modification time
and size of every state file (registry, each goal's state, ledger, history, runs, scheduler,
its turns folder) and heartbeat. PostgreSQL: one query over each goal's version, newest event
and history line, its scheduler's row version and its number of runs and journals, plus the
heartbeats (they are files on every machine). A page keeps what it read of a goal while that goal's token stays (`views`);
the watcher polls the fingerprint (all tokens) only while some page listens, and bumps a
generation number each time it moves.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import NamedTuple

from loopx_core.errors import LoopxError
from loopx_core.models import codec
from loopx_core.store.base import Store
from loopx_core.store.files import STATE_DIR, FileStore

POLL_SECONDS = 1.0
KEEPALIVE_SECONDS = 15.0
GOAL_FILES = ("state.json", "events.jsonl", "scheduler.json", "runs/index.jsonl", "runs", "turns")

PG_TOKENS = """
SELECT NULL, (SELECT xmin::text FROM loopx_registry)
UNION ALL
SELECT g.goal_id, concat_ws(':', g.version, g.xmin::text,
       (SELECT max(seq) FROM loopx_events e WHERE e.goal_id = g.goal_id),
       (SELECT max(position) FROM loopx_run_index r WHERE r.goal_id = g.goal_id),
       (SELECT xmin::text FROM loopx_scheduler s WHERE s.goal_id = g.goal_id),
       (SELECT count(*) FROM loopx_runs r WHERE r.goal_id = g.goal_id),
       (SELECT count(*) FROM loopx_journals j WHERE j.goal_id = g.goal_id))
FROM loopx_goals g
"""
"""The registry's row version, then per goal: version and row version, newest event (the ledger
is append-only), newest history line, scheduler's row version (what a page keeps), and the
number of runs and journals (new turns for the watcher: pages read those afresh). Each
sub-select is a primary-key index probe, never a scan of the ledger."""


class Tokens(NamedTuple):
    """What identifies the store's content now: equal tokens, equal content."""

    registry: object
    goals: dict[str, object]
    """A token per goal whose content can be told by one (a store offering none has no entry)."""
    heartbeats: object = None
    racy: frozenset[str | None] = frozenset()
    """Goals (None: the registry) whose token was taken too soon after a write to tell two
    contents apart: a page reads them afresh (`RACY_NS`)."""

    @property
    def fingerprint(self) -> str:
        """All tokens as one string: it moves whenever any part of the store does."""
        parts = (self.registry, sorted(self.goals.items()), self.heartbeats)
        return hashlib.sha256(repr(parts).encode()).hexdigest()


RACY_NS = 2_000_000_000
"""A file modified this recently may be modified again within the same clock tick, at the same
size (file times come from a coarse clock), so its stat does not yet identify its content:
git's "racily clean" rule. Two seconds also covers a network file system's clock skew."""


def _stat(path: Path) -> tuple[int, int, int]:
    try:
        info = path.stat()
    except OSError:
        return (0, 0, -1)
    # the inode too: an atomic replace is a new file even within one clock tick, at the same size
    return (info.st_ino, info.st_mtime_ns, info.st_size)


def heartbeats_fingerprint(root: Path) -> list[tuple[str, int, int]]:
    """Every heartbeat file's name, modification time and size."""
    folder = root / STATE_DIR / "heartbeats"
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return []
    out = []
    for entry in entries:
        with contextlib.suppress(OSError):
            info = entry.stat()
            out.append((entry.name, info.st_mtime_ns, info.st_size))
    return out


def files_tokens(store: FileStore) -> Tokens:
    """The file store's tokens: (inode, mtime, size) of every state file."""
    state = store.root / STATE_DIR
    goals = state / "goals"
    try:
        folders = sorted(e.name for e in os.scandir(goals) if e.is_dir())
    except OSError:
        folders = []
    settled = time.time_ns() - RACY_NS
    registry = _stat(state / "registry.json")
    tokens = {name: tuple(_stat(goals / name / f) for f in GOAL_FILES) for name in folders}
    racy: set[str | None] = {name for name, token in tokens.items() if max(t[1] for t in token) > settled}
    if registry[1] > settled:
        racy.add(None)
    return Tokens(registry, tokens, heartbeats_fingerprint(store.root), frozenset(racy))


def postgres_tokens(store: Store) -> Tokens:
    """The PostgreSQL store's tokens: one query (`PG_TOKENS`), and the heartbeats."""
    session = store.session  # type: ignore[attr-defined]
    rows = session.read(lambda conn: conn.execute(PG_TOKENS).fetchall())
    registry = next((token for goal_id, token in rows if goal_id is None), None)
    goals = {goal_id: token for goal_id, token in rows if goal_id is not None}
    return Tokens(registry, goals, heartbeats_fingerprint(store.root))


def protocol_tokens(store: Store) -> Tokens:
    """Any other store: the registry and each goal's version, through the Store protocol.

    Its goals have no token a page may keep reads by (a version does not cover the ledger).
    """
    registry = store.read_registry()
    parts: list[object] = [codec.line(registry)]
    for goal_id in sorted(registry.goals):
        try:
            parts.append((goal_id, store.read_goal(goal_id).version, len(store.read_history(goal_id))))
        except LoopxError as exc:
            parts.append((goal_id, exc.message))
    return Tokens(parts, {}, heartbeats_fingerprint(store.root))


def tokener(store: Store) -> Callable[[], Tokens]:
    """The cheapest way this store offers to take its tokens."""
    if isinstance(store, FileStore):
        return lambda: files_tokens(store)
    if hasattr(store, "session"):
        return lambda: postgres_tokens(store)
    return lambda: protocol_tokens(store)


def fingerprinter(store: Store) -> Callable[[], str]:
    """The store's fingerprint (all its tokens as one string); it never raises."""
    take = safe_tokens(tokener(store))
    return lambda: take().fingerprint


def safe_tokens(take: Callable[[], Tokens]) -> Callable[[], Tokens]:
    """Tokens that never raise: an unreadable store has tokens of its own, and no goal's."""

    def taken() -> Tokens:
        try:
            return take()
        except Exception as exc:  # a broken store is shown by the page, not by the watcher dying
            return Tokens(f"error:{type(exc).__name__}", {})

    return taken


class Watcher:
    """Polls a fingerprint while pages listen; each change bumps `generation` and wakes them.

    `fingerprint` must never raise (`fingerprinter`'s does not).
    """

    def __init__(self, fingerprint: Callable[[], str], *, poll_seconds: float = POLL_SECONDS) -> None:
        self.fingerprint = fingerprint
        self.poll_seconds = poll_seconds
        self.generation = 0
        self.listeners = 0
        self.stopping = False
        self.stop_when: Callable[[], bool] = lambda: False
        """Set by the server: True once it is shutting down (every stream then ends at once)."""
        self._changed = asyncio.Event()
        """Set, and replaced by a fresh one, at each change and at release: what listeners await.
        Not a Condition: on Python 3.11 a `wait_for` timed out around `Condition.wait_for` can
        leave the lock unacquired, and the next wait raises "cannot wait on un-acquired lock"."""
        self._task: asyncio.Task[None] | None = None
        self._last: str | None = None
        self._polled_at = 0.0

    async def _poll(self) -> None:
        while not self.stopping:
            await asyncio.sleep(min(self.poll_seconds, 0.25) if self.listeners else self.poll_seconds)
            if self.stop_when():
                await self.release()
                return
            if not self.listeners or not self._due():
                continue
            current = await asyncio.to_thread(self.fingerprint)
            if self._last is not None and current != self._last:
                self.generation += 1
                self._wake()
            self._last = current

    def _due(self) -> bool:
        """True when a poll interval has passed since the last fingerprint."""
        clock = asyncio.get_running_loop().time()
        if clock - self._polled_at < self.poll_seconds:
            return False
        self._polled_at = clock
        return True

    async def release(self) -> None:
        """End every stream now (the server is stopping)."""
        self.stopping = True
        self._wake()

    def _wake(self) -> None:
        """Wake every listener now waiting; later ones wait on a fresh event."""
        woken, self._changed = self._changed, asyncio.Event()
        woken.set()

    def start(self) -> None:
        """Start polling (in the server's event loop)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._poll())

    async def stop(self) -> None:
        """Stop polling and release every listener."""
        await self.release()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def events(self, page_fingerprint: str | None = None) -> AsyncIterator[str]:
        """The SSE stream of one page: a `change` event per store change, keep-alive comments between.

        `page_fingerprint`: the store's fingerprint when the page was rendered; a change made
        between that render and this stream opening is sent at once, never missed.
        """
        current = await asyncio.to_thread(self.fingerprint)
        if self._last is None:
            self._last = current
        self.listeners += 1
        seen = self.generation
        try:
            yield f"retry: 2000\nevent: hello\ndata: {seen}\n\n"
            if page_fingerprint is not None and page_fingerprint != current:
                yield f"event: change\ndata: {seen}\n\n"
            while not self.stopping:
                woken = self._changed  # taken before the check: a change after it sets this one
                if self.generation == seen:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(woken.wait(), KEEPALIVE_SECONDS)
                if self.stopping:
                    return
                if self.generation != seen:
                    seen = self.generation
                    yield f"event: change\ndata: {seen}\n\n"
                else:
                    yield ": keep-alive\n\n"
        finally:
            self.listeners -= 1
