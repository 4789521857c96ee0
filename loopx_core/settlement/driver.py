"""The turn driver: `loopx turn run-once` runs the host command and every step in-process.

Each phase is journaled; `--resume` continues a crashed or failed turn from its journal and
never repeats a committed step. What to run is read through the effect lens
(`interpret_turn_result_packet`) from the same packet the CLI adapter prints: the turn's
serial program of remaining phases, executed one step at a time, each settled (journaled)
before the program is read again and the next starts.
"""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from loopx_core import faults as fault
from loopx_core import tracing
from loopx_core.decide.packet import build_packet, load_inputs
from loopx_core.effects.lens import interpret_quota_should_run_packet, interpret_turn_result_packet
from loopx_core.effects.program import EffectProgram, EffectStep, execute
from loopx_core.errors import NotFoundError, RefusedError, SettlementError, StateInvalidError
from loopx_core.kernel.algebra import StepKind
from loopx_core.kernel.results import turn_result
from loopx_core.ops.lease import hold_lease
from loopx_core.ops.todos import complete_todo
from loopx_core.settlement.steps import TurnContext, release_turn, run_validation
from loopx_core.settlement.turns import begin_turn, mark_failed, reopen, settle, subject_of, traced_parent
from loopx_core.store.base import Store
from loopx_core.store.postgres.common import StoreUnavailableError

HOST_OUTPUT_TAIL = 2000
DRAIN_AFTER_EXIT_S = 2.0
"""How long output still arriving after the host command exits (a background child of it) is read."""

OutputSink = Callable[[bytes], None]
"""Receives the host command's output (stdout and stderr, interleaved) chunk by chunk as it arrives."""


@dataclass
class DriverOptions:
    """What `run-once` runs and how."""

    host_command: str
    validation_command: str
    resume: bool = False
    no_followup: bool = False
    slots: int | None = None
    available_capabilities: tuple[str, ...] | None = None
    lease_minutes: float = 30.0
    host_output: OutputSink | None = None
    """A tee for the host command's output as it runs (the CLI streams it to stderr); the output is
    captured for the turn result either way. None (programmatic callers): shown nowhere."""


def run_once(
    store: Store, goal_id: str, agent_id: str, options: DriverOptions, clock: Callable[[], datetime]
) -> dict[str, Any]:
    """Run (or resume) one governed turn; returns the turn result packet (or the skip packet)."""
    state = store.read_goal(goal_id)
    open_key = state.open_turns.get(agent_id)
    if open_key and not options.resume:
        raise RefusedError(
            f"agent {agent_id!r} has an open turn {open_key}: pass --resume, or cancel it", code="open_turn"
        )
    if options.resume:
        if not open_key:
            raise NotFoundError(f"agent {agent_id!r} has no open turn to resume in goal {goal_id!r}")
        try:
            found = store.read_journal(goal_id, open_key)
            with tracing.span(
                "loopx.resume", traced_parent(found), **subject_of(found.settlement_identity())
            ):
                journal = reopen(store, found, clock())
        except NotFoundError:
            raise NotFoundError(
                f"agent {agent_id!r}'s open turn has no journal to resume: clear it with "
                f"`loopx turn cancel --goal-id {goal_id} --agent-id {agent_id} --turn-key {open_key}`"
            ) from None
    else:
        decided_ns = time.time_ns()
        packet = build_packet(
            load_inputs(
                store, goal_id, agent_id, clock(), available_capabilities=options.available_capabilities
            )
        )
        lens = interpret_quota_should_run_packet(packet)
        if lens.observation.effective_action not in ("work_todo", "replan"):
            return {"schema": "loopx_turn_run_once_v0", "status": "skipped", "should_run": packet}
        identity = packet["settlement_plan"]["identity"]
        journal, replayed = begin_turn(
            store,
            goal_id,
            agent_id,
            clock(),
            todo_id=identity["todo_id"],
            replan=identity["todo_id"] is None,
            instance=identity["turn_instance_id"],
            lease_minutes=options.lease_minutes,
        )
        if replayed:  # another run-once began this very turn meanwhile: it runs the host command
            raise RefusedError(
                f"agent {agent_id!r} has an open turn {journal.turn_key} (another run-once began it): "
                "let it finish, or pass --resume once it has stopped",
                code="open_turn",
            )
        if (parent := traced_parent(journal)) is not None:
            tracing.record(
                "loopx.should_run",
                parent,
                decided_ns,
                **subject_of(journal.settlement_identity()),
                decision=packet["decision"],
                quota_state=packet["quota"]["state"],
            )
    try:
        return _drive(store, goal_id, agent_id, options, clock, journal)
    except StoreUnavailableError as error:
        if options.resume:
            raise  # a resumed turn is retried by running the same command again
        raise StoreUnavailableError(
            error.what,
            "the turn is open: run the same `loopx turn run-once` again with --resume "
            "(a step retried never charges twice)",
        ) from None


def _drive(
    store: Store,
    goal_id: str,
    agent_id: str,
    options: DriverOptions,
    clock: Callable[[], datetime],
    journal: Any,
) -> dict[str, Any]:
    """The begun turn's phases, one after another, then its todo and its slot."""
    ctx = TurnContext(
        store,
        goal_id,
        agent_id,
        journal.turn_key,
        clock,
        validation_command=options.validation_command,
        slots=options.slots,
        no_followup=options.no_followup,
        summary="turn run by `loopx turn run-once`",
        release_on_commit=False,
    )
    ran: str | None = None
    while True:
        current = store.read_journal(goal_id, journal.turn_key)
        if ran is not None and ran not in current.completed():
            raise StateInvalidError(
                f"turn {journal.turn_key}: the {ran} step ran but its journal does not record it"
            )
        # The program is read again after every step: a step may change what remains (a
        # writeback that declares no follow-up plans terminal_closeout; a host command may
        # settle phases itself), and a turn no longer open has none.
        program = interpret_turn_result_packet(turn_result(current, adapter="driver")).next_effect.program
        if program is None:
            break
        if program.execution_mode != "serial":
            raise StateInvalidError(
                f"turn {journal.turn_key} declares a {program.execution_mode} program; the driver runs serial ones"
            )
        execute(EffectProgram(program.steps[:1], "serial"), lambda step: _step(ctx, options, journal, step))
        ran = program.steps[0].step_id
    done = _finish_todo(store, current, clock())
    release_turn(store, current)
    return turn_result(current, adapter="driver", todo_done=done)


def _step(ctx: TurnContext, options: DriverOptions, journal: Any, step: EffectStep) -> None:
    """Run one phase of the program and settle it: its receipt is journaled (the driver checks)
    before the next starts."""
    phase = step.step_id
    if phase in ("host_execute", "typed_result"):
        _host(ctx, options.host_command, phase, options.host_output)
    else:
        if phase == "validation":
            _validate_first(ctx, journal)
        result, _ = settle(ctx, [StepKind(phase)])
        if result.failure is not None:
            mark_failed(ctx.store, journal, result.failure.to_json(), ctx.clock())
            result.failure.raise_error()


def _host(ctx: TurnContext, command: str, phase: str, sink: OutputSink | None = None) -> None:
    """Run the host command (host_execute) or type its result (typed_result), journaling each."""
    store = ctx.store
    journal = store.read_journal(ctx.goal_id, ctx.turn_key)
    if phase == "host_execute":
        env = {
            **os.environ,
            "LOOPX_ROOT": str(store.root),
            "LOOPX_GOAL_ID": ctx.goal_id,
            "LOOPX_AGENT_ID": ctx.agent_id,
            "LOOPX_TURN_KEY": ctx.turn_key,
            "LOOPX_TODO_ID": journal.identity.get("todo_id") or "",
        }
        start = time.monotonic()
        subject = subject_of(journal.settlement_identity())
        with tracing.span("loopx.host_command", traced_parent(journal), **subject) as span:
            if (parent := tracing.child_traceparent(span)) is not None:
                env["TRACEPARENT"] = parent  # a host that traces joins the turn's trace (W3C trace context)
            returncode, output = _run_holding_lease(ctx, journal, command, env, sink)
            if span is not None:
                span.set_attribute("loopx.exit_code", returncode)
        receipt = {"exit_code": returncode, "duration_seconds": round(time.monotonic() - start, 3)}
        _journal(ctx, "host_execute", receipt, host_result={"output_tail": output[-HOST_OUTPUT_TAIL:]})
        return
    exit_code = journal.phase("host_execute").receipt["exit_code"]  # type: ignore[union-attr]
    status = "succeeded" if exit_code == 0 else "failed"
    _journal(ctx, "typed_result", {"status": status})
    if status == "failed":
        failure = {
            "kind": "writeback_rejected",
            "step": "typed_result",
            "message": f"host command exited {exit_code}",
        }
        mark_failed(store, journal, failure, ctx.clock())
        raise SettlementError("writeback_rejected", failure["message"], step="typed_result")
    ctx.summary = f"host command succeeded in {journal.phase('host_execute').receipt['duration_seconds']}s"  # type: ignore[union-attr]


def _validate_first(ctx: TurnContext, journal: Any) -> None:
    """Run the validation command before its step (which then reuses the verdict), so a failure
    is refused in words, as `turn writeback` refuses it: the command's exit code, no data dump."""
    passed, detail = run_validation(ctx)
    if passed:
        return
    message = (
        f"validation failed: --validation-command exited {detail['exit_code']}; nothing was written back"
    )
    failure = {"kind": "writeback_rejected", "step": "validation", "message": message}
    mark_failed(ctx.store, journal, failure, ctx.clock())
    raise SettlementError("writeback_rejected", message, step="validation")


def _run_holding_lease(
    ctx: TurnContext, journal: Any, command: str, env: dict[str, str], sink: OutputSink | None
) -> tuple[int, str]:
    """Run the host command, renewing the todo lease every third of its length while it runs.

    Its output is read as it comes (a tee: into a temporary file for the turn result, and to
    `sink`). If the lease is lost meanwhile (another agent took the todo over), the host
    command is stopped and the turn refused as `lease_lost`: its work must not be settled.
    """

    minutes = journal.lease_minutes or 30.0
    every = max(1.0, minutes * 60 / 3)
    with tempfile.TemporaryFile() as out, _terminated_as_interrupt():
        proc = subprocess.Popen(
            command,
            shell=True,
            cwd=ctx.store.root,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stopped whole if loopx is stopped
        )
        assert proc.stdout is not None  # stdout=PIPE
        tee = _Tee(proc.stdout.fileno(), out, sink)
        tee.start()
        try:
            while True:
                try:
                    proc.wait(timeout=every)
                    break
                except subprocess.TimeoutExpired:
                    lost = hold_lease(
                        ctx.store, journal.settlement_identity(), ctx.clock(), lease_minutes=minutes
                    )
                    if lost:
                        _stop_group(proc)
                        mark_failed(
                            ctx.store,
                            journal,
                            {"kind": str(lost[0]), "step": "host_execute", "message": lost[1]},
                            ctx.clock(),
                        )
                        raise SettlementError(str(lost[0]), lost[1], step="host_execute") from None
        except BaseException:  # Ctrl-C, SIGTERM, a lost lease: nothing of the host command outlives loopx
            _stop_group(proc)
            raise
        finally:
            tee.exited.set()
            tee.join()
            proc.stdout.close()
        out.seek(0)
        return proc.returncode, out.read().decode(errors="replace")


STOP_GRACE_S = 3.0
"""How long a stopped host command's process group has to exit after SIGTERM before SIGKILL."""


def _stop_group(proc: subprocess.Popen[bytes]) -> None:
    """Stop the host command and everything it started (its process group): TERM, then KILL."""
    import signal

    for sig, wait_s in ((signal.SIGTERM, STOP_GRACE_S), (signal.SIGKILL, STOP_GRACE_S)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=wait_s)
            return
        except subprocess.TimeoutExpired:
            continue


@contextlib.contextmanager
def _terminated_as_interrupt() -> Iterator[None]:
    """While the host command runs, SIGTERM stops run-once as Ctrl-C does (`loopx: interrupted`,
    the host command's group stopped, the turn left open for `--resume`)."""
    import signal

    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may handle signals; a caller in a thread keeps its own
        return

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class _Tee(threading.Thread):
    """Copies what the host command prints to the capture file and the sink, as it arrives.

    A pipe stays open while any child of the host command holds it, so after the command
    exits what is still readable is drained for at most `DRAIN_AFTER_EXIT_S`, then reading stops.
    A sink that fails (stderr closed, a broken pipe) is dropped; the capture goes on.
    """

    def __init__(self, fd: int, capture: Any, sink: OutputSink | None) -> None:
        super().__init__(name="loopx-host-output", daemon=True)
        self.fd, self.capture, self.sink = fd, capture, sink
        self.exited = threading.Event()

    def run(self) -> None:
        """Read until end of output, or until the command has exited and the drain is over."""
        deadline: float | None = None
        while deadline is None or time.monotonic() < deadline:
            ready, _, _ = select.select([self.fd], [], [], 0.1)
            if self.exited.is_set() and deadline is None:
                deadline = time.monotonic() + DRAIN_AFTER_EXIT_S
            if not ready:
                if self.exited.is_set():
                    return
                continue
            chunk = os.read(self.fd, 65536)
            if not chunk:
                return
            with contextlib.suppress(OSError):  # a full disk shortens the captured tail, nothing else
                self.capture.write(chunk)
            if self.sink is not None:
                try:
                    self.sink(chunk)
                except (OSError, ValueError):
                    self.sink = None


def _journal(
    ctx: TurnContext, phase: str, receipt: dict[str, Any], host_result: dict[str, Any] | None = None
) -> None:
    store = ctx.store
    with store.goal_lock(ctx.goal_id):
        journal = store.read_journal(ctx.goal_id, ctx.turn_key)
        if journal.status == "stopped":
            raise SettlementError("cancelled", "this turn was cancelled", step=phase)
        if journal.phase(phase) is None:
            journal.record(phase, ctx.clock(), receipt)
            if host_result is not None:
                journal.host_result = host_result
            store.write_journal(journal)
    fault.point("after", phase)


def _finish_todo(store: Store, journal: Any, now: datetime) -> bool:
    """After a settled todo turn without closeout, the todo is done (ordinary todo lifecycle);
    True when the todo is done now."""

    todo_id = journal.identity.get("todo_id")
    if journal.status != "committed" or not todo_id or "terminal_closeout" in journal.plan:
        return False
    todo = store.read_goal(journal.goal_id).todo(todo_id)
    if todo is not None and todo.status == "done":
        return True
    if todo is not None and todo.status == "claimed" and todo.claimed_by == journal.agent_id:
        complete_todo(
            store,
            journal.goal_id,
            todo_id,
            now,
            agent_id=journal.agent_id,
            evidence=[f"turn {journal.turn_key}"],
        )
        return True
    return False
