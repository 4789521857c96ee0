"""Owner actions: each form calls the very op the CLI command calls (no second write path).

| action | CLI twin | op |
|---|---|---|
| resolve a gate | `loopx gate resolve` | `ops.gates.resolve_gate` |
| pause / resume a goal | `loopx goal stop` / `resume` | `ops.goals.set_goal_status` |
| clear a health finding | `loopx health clear` | `ops.health.clear_findings` |
| add a todo | `loopx todo add` | `ops.todos.add_todo` |
| answer an ask_owner: grant a capability | `loopx agent register` | `ops.goals.register_agent` |
| answer an ask_owner: re-scope the todo | `loopx todo update` | `ops.todos.update_todo` |

A missing or malformed field is a `UsageError` (the page answers 400 with its message).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime

from loopx_core.errors import UsageError
from loopx_core.ids import check_id
from loopx_core.ops import gates, goals, health, todos
from loopx_core.store.base import Store

Form = Mapping[str, str]
Action = Callable[[Store, str, Form, datetime], str]
MAX_FIELD_CHARS = 2000


def field(form: Form, name: str, *, required: bool = True) -> str | None:
    """A form field, stripped; missing or empty and `required` is a `UsageError`."""
    value = form.get(name)
    if value is not None and len(value) > MAX_FIELD_CHARS:
        raise UsageError(f"field {name!r} is longer than {MAX_FIELD_CHARS} characters")
    value = value.strip() if isinstance(value, str) else None
    if required and not value:
        raise UsageError(f"missing field {name!r}")
    return value or None


def words(value: str | None) -> list[str]:
    """A comma- or space-separated list (capabilities)."""
    return [w for w in (value or "").replace(",", " ").split() if w]


def resolve_gate(store: Store, goal_id: str, form: Form, now: datetime) -> str:
    """`loopx gate resolve`."""
    gate = gates.resolve_gate(
        store,
        goal_id,
        field(form, "gate_id") or "",
        now,
        resolution=field(form, "resolution", required=False),
    )
    return f"Resolved gate {gate.gate_id}"


def pause(store: Store, goal_id: str, form: Form, now: datetime) -> str:
    """`loopx goal stop`."""
    goals.set_goal_status(store, goal_id, "stopped", now)
    return f"Paused goal {goal_id}"


def resume(store: Store, goal_id: str, form: Form, now: datetime) -> str:
    """`loopx goal resume`."""
    goals.set_goal_status(store, goal_id, "active", now)
    return f"Resumed goal {goal_id}"


def clear_finding(store: Store, goal_id: str, form: Form, now: datetime) -> str:
    """`loopx health clear --code C`."""
    gone = health.clear_findings(store, goal_id, field(form, "code"))
    return f"Cleared {len(gone)} finding(s)"


def add_todo(store: Store, goal_id: str, form: Form, now: datetime) -> str:
    """`loopx todo add`."""
    kind = field(form, "kind", required=False) or "agent"
    if kind not in ("agent", "user"):
        raise UsageError("kind must be agent or user")
    raw_priority = field(form, "priority", required=False) or "2"
    try:
        priority = int(raw_priority)
    except ValueError:
        raise UsageError("priority must be a whole number, 0 to 9") from None
    todo = todos.add_todo(
        store,
        goal_id,
        field(form, "title") or "",
        now,
        kind=kind,  # type: ignore[arg-type]
        priority=priority,
        required_capabilities=words(field(form, "capabilities", required=False)),
    )
    return f"Added todo {todo.todo_id}"


def grant(store: Store, goal_id: str, form: Form, now: datetime) -> str:
    """Answer an ask_owner by granting a capability: `loopx agent register` with it added."""
    agent_id = check_id("agent", field(form, "agent_id") or "")
    capability = field(form, "capability") or ""
    goals.grant_capabilities(store, agent_id, [capability], now)
    return f"Granted {capability.strip().lower()} to {agent_id}"


def rescope(store: Store, goal_id: str, form: Form, now: datetime) -> str:
    """Answer an ask_owner by re-scoping the todo: `loopx todo update --capability ...`."""
    todo = todos.update_todo(
        store,
        goal_id,
        field(form, "todo_id") or "",
        now,
        required_capabilities=words(field(form, "capabilities", required=False)),
    )
    return f"Re-scoped todo {todo.todo_id}"


ACTIONS: dict[str, Action] = {
    "resolve-gate": resolve_gate,
    "pause": pause,
    "resume": resume,
    "clear-finding": clear_finding,
    "add-todo": add_todo,
    "grant": grant,
    "rescope": rescope,
}
"""Action name (the last part of `POST /goals/<goal>/<action>`) -> what it does."""
