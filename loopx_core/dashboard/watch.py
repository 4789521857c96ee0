"""Live updates: notice when the store changes, and tell every open page (server-sent events).

A fingerprint is cheap to take and changes whenever state does. The file store: the size and
modification time of every state file (registry, each goal's state, ledger, history,
scheduler, its turns folder) and heartbeat. PostgreSQL: one query over the tables' versions
and counts, plus the heartbeats (they are files on every machine). The watcher polls it only
while some page listens, and bumps a generation number each time it moves.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from loopx_core.errors import LoopxError
from loopx_core.models import codec
from loopx_core.store.base import Store
from loopx_core.store.files import STATE_DIR, FileStore

POLL_SECONDS = 1.0
KEEPALIVE_SECONDS = 15.0
GOAL_FILES = ("state.json", "events.jsonl", "scheduler.json", "runs/index.jsonl", "turns")

PG_FINGERPRINT = """
SELECT md5(coalesce((SELECT doc::text FROM loopx_registry), '')),
       (SELECT coalesce(sum(version), 0) FROM loopx_goals),
       (SELECT count(*) FROM loopx_goals),
       (SELECT count(*) FROM loopx_events),
       (SELECT count(*) FROM loopx_run_index),
       (SELECT count(*) FROM loopx_journals),
       (SELECT md5(coalesce(string_agg(doc::text, '' ORDER BY goal_id), '')) FROM loopx_scheduler)
"""


def _stat(path: Path) -> tuple[int, int]:
    try:
        info = path.stat()
    except OSError:
        return (0, -1)
    return (info.st_mtime_ns, info.st_size)


def heartbeats_fingerprint(root: Path) -> list[tuple[str, int, int]]:
    """Every heartbeat file's name and modification time."""
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


def files_fingerprint(store: FileStore) -> str:
    """The file store's fingerprint: (mtime, size) of every state file."""
    state = store.root / STATE_DIR
    parts: list[object] = [_stat(state / "registry.json")]
    goals = state / "goals"
    try:
        folders = sorted(e.name for e in os.scandir(goals) if e.is_dir())
    except OSError:
        folders = []
    for name in folders:
        parts.append(name)
        parts += [_stat(goals / name / f) for f in GOAL_FILES]
    parts.append(heartbeats_fingerprint(store.root))
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def postgres_fingerprint(store: Store) -> str:
    """The PostgreSQL store's fingerprint: one query over versions and counts, and the heartbeats."""
    session = store.session  # type: ignore[attr-defined]
    row = session.read(lambda conn: conn.execute(PG_FINGERPRINT).fetchone())
    return hashlib.sha256(repr((row, heartbeats_fingerprint(store.root))).encode()).hexdigest()


def protocol_fingerprint(store: Store) -> str:
    """Any other store: the registry and each goal's version, through the Store protocol."""
    registry = store.read_registry()
    parts: list[object] = [codec.line(registry)]
    for goal_id in sorted(registry.goals):
        try:
            parts.append((goal_id, store.read_goal(goal_id).version, len(store.read_history(goal_id))))
        except LoopxError as exc:
            parts.append((goal_id, exc.message))
    parts.append(heartbeats_fingerprint(store.root))
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def fingerprinter(store: Store) -> Callable[[], str]:
    """The cheapest fingerprint this store offers."""
    if isinstance(store, FileStore):
        return lambda: files_fingerprint(store)
    if hasattr(store, "session"):
        return lambda: postgres_fingerprint(store)
    return lambda: protocol_fingerprint(store)


def safe(fingerprint: Callable[[], str]) -> Callable[[], str]:
    """A fingerprint that never raises: an unreadable store has a fingerprint of its own."""

    def take() -> str:
        try:
            return fingerprint()
        except Exception as exc:  # a broken store is shown by the page, not by the watcher dying
            return f"error:{type(exc).__name__}"

    return take


class Watcher:
    """Polls a fingerprint while pages listen; each change bumps `generation` and wakes them."""

    def __init__(self, fingerprint: Callable[[], str], *, poll_seconds: float = POLL_SECONDS) -> None:
        self.fingerprint = safe(fingerprint)
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
