"""The demo should-run packet the hint checks use: built on a real store in the sandbox."""

from __future__ import annotations

from typing import Any

from loopx_core.conformance.sandbox import T0, Sandbox
from loopx_core.decide.packet import build_packet, load_inputs
from loopx_core.ops import goals, todos
from loopx_core.store.files import FileStore


def demo_packet(sb: Sandbox) -> dict[str, Any]:
    """A should-run packet (no hints merged) for goal `demo`, agent `builder`, one open todo."""
    root = sb.root / "store"
    root.mkdir(exist_ok=True)
    store = FileStore(root)
    if store.init():
        goals.add_goal(store, "demo", "Ship the demo parser", T0, compute=0.5)
        goals.register_agent(store, "builder", ["python", "shell"], T0)
        todos.add_todo(store, "demo", "Write the parser", T0, priority=1)
    packet = build_packet(load_inputs(store, "demo", "builder", T0, surface=sb.host))
    if not packet["should_run"]:  # the kit's own scenario is broken, not the plugin
        raise RuntimeError(f"the demo packet should run: {packet['reason']}")
    return packet
