"""`loopx mcp serve`: the LoopX tools over MCP (stdio), on the official `mcp` SDK.

The server keeps no state between calls: every tool opens the store afresh, so the CLI and
the server can be used side by side. Inputs go through the same checks as the CLI; every
refusal comes back as an error result whose text is the CLI's JSON error object, with the
settlement failure kind as its `code`. The SDK is imported only by this command.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import wraps
from typing import Any, Literal, TypeVar

from loopx_core.clock import now
from loopx_core.errors import LoopxError
from loopx_core.store.files import FileStore, find_root

F = TypeVar("F", bound=Callable[..., Any])
SERVER_NAME = "loopx"


def _typed_errors(fn: F) -> F:
    """Turn a LoopX error into the SDK's tool error carrying the JSON error object."""
    from mcp.server.mcpserver.exceptions import ToolError

    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except LoopxError as error:
            raise ToolError(json.dumps(error.to_json())) from None

    return wrapper  # type: ignore[return-value]


def build_server(root: str | None = None) -> Any:
    """The MCP server with every LoopX tool registered."""
    from mcp.server.mcpserver import MCPServer

    from loopx_core import __version__

    server = MCPServer(SERVER_NAME, version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")

    def store() -> FileStore:
        return FileStore(find_root(root))

    def tool(fn: F) -> F:
        server.tool(name=fn.__name__)(_typed_errors(fn))
        return fn

    @tool
    def quota_should_run(
        goal_id: str,
        agent_id: str,
        available_capabilities: list[str] | None = None,
        surface: str | None = None,
    ) -> dict[str, Any]:
        """Decide whether and what this agent should run now (read-only): the should-run packet."""
        from loopx_core.cli.should_run import hint_contributors
        from loopx_core.decide.packet import build_packet, load_inputs

        inputs = load_inputs(
            store(),
            goal_id,
            agent_id,
            now(),
            available_capabilities=tuple(available_capabilities) if available_capabilities else None,
            surface=surface,
        )
        return build_packet(inputs, contributors=hint_contributors(surface))

    @tool
    def todo_list(
        goal_id: str, status: Literal["open", "claimed", "done", "blocked", "deferred"] | None = None
    ) -> dict[str, Any]:
        """The goal's todos in run order (optionally one status)."""
        from loopx_core.ops.todos import list_todos

        items = list_todos(store(), goal_id, status=status)
        return {"goal_id": goal_id, "todos": [t.model_dump(mode="json", exclude_none=True) for t in items]}

    @tool
    def todo_claim(goal_id: str, todo_id: str, agent_id: str, lease_minutes: float = 30.0) -> dict[str, Any]:
        """Take a todo's lease (compare-and-swap; a live lease of another agent is a conflict)."""
        from loopx_core.ops.todos import claim_todo

        return claim_todo(store(), goal_id, todo_id, agent_id, now(), lease_minutes=lease_minutes).model_dump(
            mode="json", exclude_none=True
        )

    @tool
    def todo_complete(
        goal_id: str,
        todo_id: str,
        agent_id: str,
        evidence: list[str] | None = None,
        no_follow_up: bool = False,
        turn_key: str | None = None,
    ) -> dict[str, Any]:
        """Complete a todo; with no_follow_up and turn_key it is the turn's terminal closeout."""
        if no_follow_up or turn_key:
            if not (no_follow_up and turn_key):
                from loopx_core.errors import UsageError

                raise UsageError("a terminal closeout needs no_follow_up and turn_key together")
            return _settle(
                store(),
                goal_id,
                agent_id,
                turn_key,
                "terminal_closeout",
                todo_id=todo_id,
                evidence=evidence or [],
            )
        from loopx_core.ops.todos import complete_todo

        return complete_todo(
            store(), goal_id, todo_id, now(), agent_id=agent_id, evidence=evidence
        ).model_dump(mode="json", exclude_none=True)

    @tool
    def turn_begin(
        goal_id: str,
        agent_id: str,
        todo_id: str | None = None,
        replan: bool = False,
        turn_instance_id: str | None = None,
    ) -> dict[str, Any]:
        """Start a turn: claim the todo and open its journal; returns the turn key."""
        from loopx_core.settlement.turns import begin_turn, turn_result

        journal, replayed = begin_turn(
            store(), goal_id, agent_id, now(), todo_id=todo_id, replan=replan, instance=turn_instance_id
        )
        return {**turn_result(journal, adapter="mcp"), "replayed": replayed}

    @tool
    def writeback(
        goal_id: str,
        agent_id: str,
        turn_key: str,
        summary: str,
        validation_status: Literal["passed", "failed"],
        evidence: list[str] | None = None,
        changed_files: list[str] | None = None,
        no_follow_up: bool = False,
    ) -> dict[str, Any]:
        """Settle the turn's work: validation evidence, then the durable run record."""
        from loopx_core.settlement.steps import TurnContext
        from loopx_core.settlement.turns import writeback_turn

        ctx = TurnContext(
            store(),
            goal_id,
            agent_id,
            turn_key,
            now,
            summary=summary,
            evidence=evidence or [],
            validation_passed=validation_status == "passed",
            changed_files=changed_files or [],
            no_followup=no_follow_up,
        )
        return writeback_turn(ctx, adapter="mcp")

    @tool
    def quota_spend(goal_id: str, agent_id: str, turn_key: str, todo_id: str | None = None) -> dict[str, Any]:
        """Charge the turn (after its writeback), bound to its identity; a repeat returns the receipt."""
        return _settle(store(), goal_id, agent_id, turn_key, "quota_spend", todo_id=todo_id)

    @tool
    def turn_inspect_journal(goal_id: str, agent_id: str, turn_key: str) -> dict[str, Any]:
        """The allowlisted, read-only inspection of a turn journal."""
        from loopx_core.ids import check_id
        from loopx_core.settlement.journal import check_turn_key, inspect

        check_id("goal", goal_id)
        check_id("agent", agent_id)
        check_turn_key(turn_key)
        s = store()
        with s.goal_lock(goal_id):
            journal = s.read_journal(goal_id, turn_key)
        return inspect(journal, goal_id=goal_id, agent_id=agent_id, turn_key=turn_key)

    @tool
    def status() -> dict[str, Any]:
        """Every goal's quota state, most urgent first."""
        from loopx_core.status import attention

        return {"goals": attention(store(), now())}

    return server


def _settle(
    s: FileStore, goal_id: str, agent_id: str, turn_key: str, step: str, **extra: Any
) -> dict[str, Any]:
    from loopx_core.settlement.algebra import StepKind
    from loopx_core.settlement.steps import TurnContext
    from loopx_core.settlement.turns import settle_steps

    return settle_steps(
        TurnContext(s, goal_id, agent_id, turn_key, now, **extra), [StepKind(step)], adapter="mcp"
    )


INSTRUCTIONS = (
    "LoopX governs this long-running loop. Each turn: call quota_should_run; if should_run is false, stop. "
    "Otherwise turn_begin, do the work, writeback (with validation evidence), quota_spend, then todo_complete. "
    "Errors carry a JSON object whose code names the refusal (e.g. writeback_missing)."
)


def serve(root: str | None = None) -> None:
    """Run the server on stdio until the client closes it."""
    build_server(root).run()
