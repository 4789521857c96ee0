"""Where sinks are configured: the project (`.loopx/notices/sinks.json`) and the user.

The user's file is `$XDG_CONFIG_HOME/loopx/notices.json` (default `~/.config/loopx/`); its
sinks get every project's notices. Sink ids are `s1, s2, ...` in the project and `u1, u2, ...`
for the user. Both files are written atomically with mode 0600: a sink URL may carry a
credential, which LoopX never prints (`sinks.redact`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Literal, TypeVar

from loopx_core.errors import NotFoundError, UsageError
from loopx_core.ids import check_id
from loopx_core.models import codec
from loopx_core.models.constants import EVENT_KINDS
from loopx_core.models.records import SinkConfig, SinkFile
from loopx_core.notices.presence import has_sinks, sinks_path
from loopx_core.store.atomic import atomic_write_bytes, read_record
from loopx_core.store.files import STATE_DIR

T = TypeVar("T")
Scope = Literal["project", "user"]
PREFIX = {"project": "s", "user": "u"}


def shown_path(scope: Scope) -> str:
    """How messages name a sink file (never a resolved path)."""
    return ".loopx/notices/sinks.json" if scope == "project" else "~/.config/loopx/notices.json"


def read_sinks(root: Path, scope: Scope) -> SinkFile:
    """One scope's sink file (an empty one when it does not exist yet)."""
    try:
        return read_record(
            sinks_path(root, scope), SinkFile, what=f"{scope} notice sinks", root=_root_for(root, scope)
        )
    except NotFoundError:
        return SinkFile(schema_version=1)


def _root_for(root: Path, scope: Scope) -> Path:
    return root if scope == "project" else sinks_path(root, scope).parent


def all_sinks(root: Path) -> list[SinkConfig]:
    """Every configured sink, the project's first."""
    if not has_sinks(root):
        return []
    return [*read_sinks(root, "project").sinks, *read_sinks(root, "user").sinks]


def _update(root: Path, scope: Scope, change: Callable[[SinkFile], T]) -> T:
    from loopx_core.store.lock import file_lock

    path = sinks_path(root, scope)
    lock = (
        (root / STATE_DIR / "locks" / "notice-sinks.lock")
        if scope == "project"
        else path.with_suffix(".lock")
    )
    if scope == "project" and not (root / STATE_DIR).is_dir():
        raise NotFoundError("no LoopX state here: run `loopx init` in the project first, or pass --root")
    with file_lock(lock):
        current = read_sinks(root, scope)
        result = change(current)
        atomic_write_bytes(path, codec.document(current, exclude_none=True))
        os.chmod(path, 0o600)
        return result


def add_sink(
    root: Path,
    url: str,
    now: datetime,
    *,
    scope: Scope = "project",
    goal_id: str | None = None,
    events: list[str] | None = None,
) -> SinkConfig:
    """Record a sink (its URL checked by the caller); the same URL and filters twice is one sink."""
    if goal_id is not None:
        check_id("goal", goal_id)
    wanted = sorted(set(events or []))
    for event in wanted:
        if event not in EVENT_KINDS:
            raise UsageError(f"unknown --event {event[:40]!r}; events: {', '.join(EVENT_KINDS)}")

    def change(f: SinkFile) -> SinkConfig:
        for sink in f.sinks:
            if sink.url == url and sink.goal_id == goal_id and sorted(sink.events) == wanted:
                return sink
        sink = SinkConfig(
            sink_id=f"{PREFIX[scope]}{f.next_number}",
            url=url,
            goal_id=goal_id,
            events=wanted,  # type: ignore[arg-type]
            added_at=now,
        )
        f.next_number += 1
        f.sinks.append(sink)
        return sink

    return _update(root, scope, change)


def remove_sink(root: Path, sink_id: str) -> SinkConfig:
    """Remove a sink by id (`s<N>` from the project, `u<N>` from the user's file)."""
    check_id("sink", sink_id)
    scope: Scope = "user" if sink_id.startswith("u") else "project"
    found = next((s for s in read_sinks(root, scope).sinks if s.sink_id == sink_id), None)
    if found is None:
        raise NotFoundError(f"no notice sink {sink_id!r} (see `loopx notify list`)")

    def change(f: SinkFile) -> SinkConfig:
        f.sinks = [s for s in f.sinks if s.sink_id != sink_id]
        return found

    return _update(root, scope, change)
