"""Claude Code's event hooks: `loopx hook claude-stop` and `loopx hook claude-session-start`.

The Stop hook keeps Claude working on the goal only while LoopX says run: it answers
`{"decision": "block", "reason": <the next turn's instructions>}` for a run decision and
nothing otherwise (paused, throttled, gated, waiting goals always let Claude stop). Within
one session it blocks at most `LOOPX_STOP_MAX_BLOCKS` times in a row (default 25), and the
quota stops it earlier: a throttled goal never blocks. SessionStart gives Claude the goal's
state, the next action and the last few runs. Claude has no scheduler: neither hook acks an
rrule (see docs/heartbeat.md).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loopx_core.clock import now
from loopx_core.errors import LoopxError
from loopx_core.hosts import HookAnswer, HookCall
from loopx_core.store.atomic import atomic_write_bytes, read_bytes
from loopx_core.store.choice import open_store
from loopx_core.store.roots import STATE_DIR, find_root

if TYPE_CHECKING:
    from loopx_core.store.base import Store

SURFACE = "claude-code"
DEFAULT_MAX_BLOCKS = 25
MAX_COUNTED = 1_000_000
HISTORY_RUNS = 3
"""How many of the goal's last runs SessionStart shows."""
ALLOW = HookAnswer()


def _root(call: HookCall) -> Path:
    """The project root: the hook's own, else Claude's project folder, else the event's `cwd`."""
    cwd = call.payload.get("cwd")
    root = call.root or os.environ.get("CLAUDE_PROJECT_DIR") or (cwd if isinstance(cwd, str) else "") or None
    return find_root(root, cwd=Path(root) if root else None)


def _packet(call: HookCall, store: Store) -> dict[str, Any]:
    from loopx_core.ops.tick import tick_packet

    return tick_packet(store, call.goal_id or "", call.agent_id, now(), surface=SURFACE)  # this host's tick


def command_line(loopx: str) -> list[str]:
    """The line that names the LoopX command when it is not `loopx` (the agent runs it so)."""
    if loopx == "loopx":
        return []
    return [f"The LoopX command here is `{loopx}`: use it wherever a command below starts with `loopx`."]


def instructions(packet: dict[str, Any], loopx: str = "loopx") -> str:
    """The next turn's instructions: what to do and the exact commands, in order."""
    actions = packet["interaction_contract"]["cli_channel"]["next_cli_actions"]
    lines = [f"LoopX says run ({packet['effective_action']}): {packet['recommended_action']}"]
    if actions:
        lines += command_line(loopx)
        lines.append(
            "Run these commands in order (fill <summary> and <evidence>; never spend before writeback):"
        )
        lines += [f"{n}. {action}" for n, action in enumerate(actions, 1)]
    return "\n".join(lines)


def history_lines(store: Store, goal_id: str, count: int = HISTORY_RUNS) -> list[str]:
    """The goal's last `count` runs, newest first, one short line each (or why they are unreadable)."""
    from loopx_core.ops.history import last_runs

    try:
        runs = last_runs(store, goal_id, count)
    except LoopxError as error:
        return [f"Last runs: unreadable ({' '.join(error.message.split())[:160]})."]
    if not runs:
        return ["Last runs: none yet."]
    lines = ["Last runs (newest first):"]
    for run in runs:
        subject = run.get("todo_id") or "replan"
        summary = " ".join(str(run.get("summary", "")).split())
        if len(summary) > 100:
            summary = summary[:97] + "..."
        lines.append(
            f"- {run['at']} {run['agent_id']} on {subject} ({run['validation']}, {run['progress']}): {summary}"
        )
    return lines


def _counter(root: Path, session: str) -> Path:
    # A local file whatever the store: the count is about this machine's Claude session.
    digest = hashlib.sha256(session.encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return root / STATE_DIR / "hooks" / f"claude-stop-{digest}.json"


def read_counter(path: Path) -> int | None:
    """Blocks so far (0 without a file); None when the file is damaged or not a regular file.

    The file is `{"blocks": N}` (N a whole number from 0 to 1,000,000), written only here.
    """
    try:
        data, _ = read_bytes(path, what="stop counter")
    except LoopxError as error:
        return 0 if not path.is_symlink() and error.code == "not_found" else None
    try:
        parsed = json.loads(data)
    except (ValueError, RecursionError):
        return None
    blocks = parsed.get("blocks") if isinstance(parsed, dict) and set(parsed) == {"blocks"} else None
    return blocks if type(blocks) is int and 0 <= blocks <= MAX_COUNTED else None


def counter_bytes(blocks: int) -> bytes:
    """The counter file for `blocks`."""
    return json.dumps({"blocks": blocks}).encode()


def max_blocks() -> int:
    """`LOOPX_STOP_MAX_BLOCKS` (a whole number 0-1000), else the default."""
    raw = os.environ.get("LOOPX_STOP_MAX_BLOCKS", "").strip()
    return int(raw) if raw.isdigit() and int(raw) <= 1000 else DEFAULT_MAX_BLOCKS


def stop(call: HookCall) -> HookAnswer:
    """The Stop hook: block with the next turn's instructions only while should-run says run."""
    if not call.goal_id or not call.agent_id:
        return ALLOW
    root = _root(call)
    packet = _packet(call, open_store(root))
    if packet["decision"] != "run" or packet["should_run"] is not True:
        return ALLOW
    session = str(call.payload.get("session_id") or "default")[:1000]
    counter = _counter(root, session)
    blocks = read_counter(counter) if call.payload.get("stop_hook_active") else 0
    if blocks is None:
        # A counter we cannot read could let the hook block forever: let Claude stop, and start afresh.
        if counter.is_file() and not counter.is_symlink():
            counter.unlink(missing_ok=True)
        return HookAnswer(stderr=f"the stop counter {counter.name} was unreadable; letting Claude stop")
    if blocks >= max_blocks():
        return ALLOW
    try:  # not fsynced: a crash may leave an older, empty or zeroed counter, read as above (no loop)
        atomic_write_bytes(counter, counter_bytes(blocks + 1), durable=False)
    except LoopxError:
        return HookAnswer(stderr=f"the stop counter {counter.name} cannot be written; letting Claude stop")
    return HookAnswer(json.dumps({"decision": "block", "reason": instructions(packet, call.loopx_command)}))


def session_start(call: HookCall) -> HookAnswer:
    """SessionStart: a few lines of context about the goal, for Claude to start from."""
    if not call.goal_id or not call.agent_id:
        return HookAnswer("LoopX: no goal selected for this session (set LOOPX_GOAL_ID and LOOPX_AGENT_ID).")
    store = open_store(_root(call))
    packet = _packet(call, store)
    quota = packet["quota"]
    slots = f"{quota.get('spent_slots', '?')}/{quota.get('allowed_slots', '?')} slots"
    lines = [
        f"LoopX goal {packet['goal_id']} for agent {packet['agent_id']}: {quota['state']}, {slots}.",
        f"Next: {packet['effective_action']}: {packet['recommended_action']}",
        *history_lines(store, packet["goal_id"]),
        "Use the /loopx skill to run one governed turn (`/loopx <task>` adds a todo first).",
    ]
    return HookAnswer("\n".join(lines))
