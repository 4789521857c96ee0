"""The settlement commands' bodies: what `turn begin`, `writeback`, `turn spend`, `turn closeout`,
`quota spend` and `todo complete` do once typer has read their options.

Shared by turn_cmds, quota_cmds and todo_cmds, whose commands are older and newer spellings of
the same steps. `root` is the `--root` / `LOOPX_ROOT` value (None: the nearest `.loopx/` up
from the working folder). Each runner prints its result and returns; a LoopX error is printed
and exits with its code (`reporting`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from loopx_core.cli.output import emit, reporting
from loopx_core.clock import now

if TYPE_CHECKING:
    from loopx_core.store.base import Store


def open_root(root: str | None) -> Store:
    """The project's store: files, or the PostgreSQL store it records or `LOOPX_STORE` names."""
    from loopx_core.store.choice import open_store
    from loopx_core.store.roots import find_root

    return open_store(find_root(root))


def result_markdown(packet: dict[str, Any]) -> str:
    """A turn result for people; the next actions come through the effect lens."""
    from loopx_core.effects.lens import interpret_turn_result_packet

    lens = interpret_turn_result_packet(packet)
    lines = [
        f"# Turn {packet['status']}: {packet['summary']}",
        "",
        f"- turn: {packet['turn_key']}",
        f"- completed phases: {', '.join(packet['completed_phases']) or 'none'}",
    ]
    if packet.get("effects"):
        lines.append(f"- effects now: {', '.join(packet['effects'])}")
    replayed = [r["step"] for r in packet.get("receipts", []) if r["replayed"]]
    if replayed:
        lines.append(f"- already committed (replayed, no effect): {', '.join(replayed)}")
    if lens.next_effect.cli_actions:
        lines += ["", "## Next CLI actions", ""] + [
            f"{i}. `{a}`" for i, a in enumerate(lens.next_effect.cli_actions, 1)
        ]
    return "\n".join(lines) + "\n"


def emit_result(packet: dict[str, Any], fmt: str) -> None:
    """Print a turn result packet."""
    emit(packet, fmt, result_markdown)


def run_begin(
    root: str | None,
    goal_id: str,
    agent_id: str,
    *,
    todo_id: str | None = None,
    replan: bool = False,
    turn_instance_id: str | None = None,
    lease_minutes: float = 30.0,
    fmt: str = "auto",
) -> None:
    """`turn begin`: claim the todo (lease), open the journal, print the turn result."""
    from loopx_core.kernel.results import turn_result
    from loopx_core.settlement.turns import begin_turn

    with reporting(fmt):
        journal, replayed = begin_turn(
            open_root(root),
            goal_id,
            agent_id,
            now(),
            todo_id=todo_id,
            replan=replan,
            instance=turn_instance_id,
            lease_minutes=lease_minutes,
        )
        packet = turn_result(journal)
        packet["replayed"] = replayed
        emit_result(packet, fmt)


def run_writeback(
    root: str | None,
    goal_id: str,
    agent_id: str,
    turn_key: str,
    summary: str,
    *,
    evidence: list[str] | None = None,
    validation_status: str | None = None,
    validation_command: str | None = None,
    changed_file: list[str] | None = None,
    todo_id: str | None = None,
    no_follow_up: bool = False,
    no_progress: str | None = None,
    fmt: str = "auto",
) -> None:
    """`writeback` (`turn writeback`): validation evidence, then the durable run record."""
    from loopx_core.errors import UsageError
    from loopx_core.settlement.steps import TurnContext
    from loopx_core.settlement.turns import writeback_turn

    with reporting(fmt):
        if validation_status not in (None, "passed", "failed"):
            raise UsageError("--validation-status must be passed or failed")
        turn = TurnContext(
            open_root(root),
            goal_id,
            agent_id,
            turn_key,
            now,
            todo_id=todo_id,
            summary=summary,
            evidence=evidence or [],
            validation_passed=None if validation_status is None else validation_status == "passed",
            validation_command=validation_command,
            changed_files=changed_file or [],
            no_followup=no_follow_up,
            no_progress=no_progress,
        )
        emit_result(writeback_turn(turn, adapter="cli"), fmt)


def settle_step(
    root: str | None, goal_id: str, agent_id: str, turn_key: str, step: str, fmt: str, **extra: Any
) -> None:
    """Run one settlement step (spend or closeout) and print the turn result."""
    from loopx_core.kernel.algebra import StepKind
    from loopx_core.settlement.steps import TurnContext
    from loopx_core.settlement.turns import settle_steps

    turn = TurnContext(open_root(root), goal_id, agent_id, turn_key, now, **extra)
    emit_result(settle_steps(turn, [StepKind(step)], adapter="cli"), fmt)


def run_turn_spend(
    root: str | None,
    goal_id: str,
    agent_id: str,
    turn_key: str,
    *,
    todo_id: str | None = None,
    slots: int | None = None,
    fmt: str = "auto",
) -> None:
    """`turn spend`: charge a settled turn to the quota, once, after its writeback."""
    with reporting(fmt):
        settle_step(root, goal_id, agent_id, turn_key, "quota_spend", fmt, todo_id=todo_id, slots=slots)


def run_closeout(
    root: str | None,
    goal_id: str,
    agent_id: str,
    turn_key: str,
    *,
    todo_id: str | None = None,
    evidence: list[str] | None = None,
    fmt: str = "auto",
) -> None:
    """`turn closeout`: the turn's terminal closeout, after its writeback and spend."""
    with reporting(fmt):
        closeout(root, goal_id, agent_id, turn_key, todo_id, evidence, fmt)


def closeout(
    root: str | None,
    goal_id: str,
    agent_id: str,
    turn_key: str,
    todo_id: str | None,
    evidence: list[str] | None,
    fmt: str,
) -> None:
    """The terminal closeout step, for `turn closeout` and `todo complete --no-follow-up` alike."""
    settle_step(
        root, goal_id, agent_id, turn_key, "terminal_closeout", fmt, todo_id=todo_id, evidence=evidence or []
    )


def run_quota_spend(
    root: str | None,
    goal_id: str,
    agent_id: str,
    *,
    turn_key: str | None = None,
    todo_id: str | None = None,
    slots: int | None = None,
    manual: bool = False,
    minutes: float | None = None,
    turn_instance_id: str | None = None,
    fmt: str = "auto",
) -> None:
    """`quota spend`: with --turn-key the turn's spend, with --manual an owner's unbound charge."""
    from loopx_core.errors import UsageError

    with reporting(fmt):
        if turn_key is not None:
            if manual or minutes is not None or turn_instance_id is not None:
                raise UsageError(
                    "--turn-key spends are measured by the turn: drop --manual/--minutes/--turn-instance-id"
                )
            settle_step(root, goal_id, agent_id, turn_key, "quota_spend", fmt, todo_id=todo_id, slots=slots)
            return
        if not manual:
            raise UsageError(
                "pass --turn-key of the turn to charge (or --manual for an owner's unbound charge)"
            )
        if slots is None and minutes is None:
            raise UsageError("a manual charge needs --slots or --minutes")
        from loopx_core.ops.spend import spend as record

        result = record(
            open_root(root),
            goal_id,
            agent_id,
            now(),
            todo_id=todo_id,
            turn_instance_id=turn_instance_id,
            slots=slots,
            minutes=minutes,
        )
        e = result.event
        emit(
            result.to_json(),
            fmt,
            f"{'Already charged' if result.replayed else 'Charged'} {e.slots} slot(s) to {goal_id} ({e.event_id})",
        )


def run_complete(
    root: str | None,
    goal_id: str,
    todo_id: str,
    *,
    agent_id: str | None = None,
    evidence: list[str] | None = None,
    no_follow_up: bool = False,
    turn_key: str | None = None,
    fmt: str = "auto",
) -> None:
    """`todo complete`: a todo done with its evidence; with --no-follow-up --turn-key the closeout."""
    from loopx_core.errors import UsageError

    with reporting(fmt):
        if no_follow_up or turn_key:
            if not (no_follow_up and turn_key and agent_id):
                raise UsageError(
                    "a terminal closeout needs --no-follow-up, --turn-key and --agent-id together"
                )
            closeout(root, goal_id, agent_id, turn_key, todo_id, evidence, fmt)
            return
        from loopx_core.ops import todos

        todo = todos.complete_todo(
            open_root(root), goal_id, todo_id, now(), agent_id=agent_id, evidence=evidence
        )
        emit(todo.dump(exclude_none=True), fmt, f"Completed todo {todo.todo_id}")
