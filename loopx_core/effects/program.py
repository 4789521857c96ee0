"""Ordered effect programs and their one executor.

A packet's next effect is an ordered program of steps plus the strategy that runs them, its
`execution_mode` (seed 001: strategies inside the interpreter, not new state machines):

- `serial`: each step starts after the one before it succeeded; the first failure stops the
  program and no later step runs. The turn driver runs a turn's remaining phases this way.
- `interleaved`: the same order and stop rule, and between two steps the caller's `between`
  runs (the agent's own work or reasoning, a re-read of state) before the next step starts.
- `parallel`: the steps do not depend on one another: all of them run (at most `MAX_PARALLEL`
  at once), one step's failure stops none of the others, and the first failure in step order
  is raised once every step has finished.

A program that declares no mode is not run: the executor never guesses one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

ExecutionMode = Literal["serial", "parallel", "interleaved"]
MODES: tuple[ExecutionMode, ...] = ("serial", "parallel", "interleaved")
MAX_PARALLEL = 8
"""Most steps of a parallel program running at once."""


@dataclass(frozen=True)
class EffectStep:
    """One step of an ordered effect program."""

    step_id: str
    kind: str
    command: str | None = None
    purpose: str | None = None


@dataclass(frozen=True)
class EffectProgram:
    """Ordered steps and the strategy to execute them (None: not declared)."""

    steps: tuple[EffectStep, ...]
    execution_mode: ExecutionMode | None = None


def declared_mode(value: object) -> ExecutionMode | None:
    """`value` when it names an execution mode, else None: nothing invents one (seed 001)."""
    return next((mode for mode in MODES if value == mode), None)


def effect_program_from_ordered_steps(
    steps: Iterable[Mapping[str, Any] | str], execution_mode: ExecutionMode | None = None
) -> EffectProgram:
    """Map an ordered list (dicts with step_id/kind/command/purpose, or bare commands) to a program."""
    out = []
    for index, step in enumerate(steps, 1):
        if isinstance(step, str):
            out.append(EffectStep(step_id=f"s{index}", kind="cli", command=step))
        else:
            out.append(
                EffectStep(
                    step_id=str(step.get("step_id") or f"s{index}"),
                    kind=str(step.get("kind") or "cli"),
                    command=step.get("command"),
                    purpose=step.get("purpose"),
                )
            )
    return EffectProgram(tuple(out), declared_mode(execution_mode))


def execute(
    program: EffectProgram,
    run: Callable[[EffectStep], None],
    *,
    between: Callable[[EffectStep, EffectStep], None] | None = None,
) -> tuple[str, ...]:
    """Run the program's steps with `run` as its mode says; the ids of the steps that succeeded.

    A failing step's exception propagates (for `parallel`, the first in step order, after every
    step finished). `between(done, next)` runs between two steps of an interleaved program.
    """
    mode = declared_mode(program.execution_mode)
    if mode is None:
        raise ValueError("the program declares no execution_mode LoopX knows: nothing was run")
    if mode == "parallel":
        return _parallel(program.steps, run)
    done: list[str] = []
    for index, step in enumerate(program.steps):
        if index and mode == "interleaved" and between is not None:
            between(program.steps[index - 1], step)
        run(step)
        done.append(step.step_id)
    return tuple(done)


def _parallel(steps: tuple[EffectStep, ...], run: Callable[[EffectStep], None]) -> tuple[str, ...]:
    from concurrent.futures import ThreadPoolExecutor, wait

    if not steps:
        return ()
    pool = ThreadPoolExecutor(max_workers=min(MAX_PARALLEL, len(steps)))
    try:
        futures = [pool.submit(run, step) for step in steps]
        wait(futures)
    except BaseException:  # Ctrl-C: steps not started are dropped, the running ones finish alone
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    failures = [(step, f.exception()) for step, f in zip(steps, futures, strict=True) if f.exception()]
    if failures:
        raise failures[0][1]  # type: ignore[misc]
    return tuple(step.step_id for step in steps)
