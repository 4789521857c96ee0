"""Paired whole-process timing: every figure beside `python -c pass` measured in the same rounds.

The machine is shared and noisy, so a figure alone means little: each round runs the baseline
and then every command once, and a command's figure is the ratio of its median to the
baseline's median over the same rounds. Peak memory comes from the child's own rusage
(`os.wait4`), so it is the process's, not the benchmark's.
"""

from __future__ import annotations

import compileall
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LOOPX = os.environ.get("BENCH_LOOPX") or str(Path(sys.executable).parent / "loopx")
BASELINE = [sys.executable, "-c", "pass"]


def compile_first() -> str:
    """Compile LoopX's modules (and its plugins) to bytecode, as an installed wheel carries them.

    With `PYTHONDONTWRITEBYTECODE=1` (set on this machine) an editable checkout would otherwise
    compile every LoopX module on every call; the line returned says what was done.
    """
    for folder in ("loopx_core", "plugins"):
        compileall.compile_dir(REPO / folder, quiet=1)
    flag = os.environ.get("PYTHONDONTWRITEBYTECODE") or "unset"
    return f"bytecode: compileall run on loopx_core/ and plugins/ first (PYTHONDONTWRITEBYTECODE={flag})"


@dataclass
class Run:
    """One child process: wall milliseconds, peak resident memory in MiB, exit code, output."""

    ms: float
    peak_mib: float
    code: int
    stdout: bytes


def run(argv: list[str], env: dict[str, str], stdin: bytes = b"", cwd: Path | None = None) -> Run:
    """Run `argv` to completion; its wall time and its own peak memory."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, env=env, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert proc.stdin is not None and proc.stdout is not None
    if stdin:
        proc.stdin.write(stdin)
    proc.stdin.close()
    out = proc.stdout.read()
    proc.stdout.close()
    _, status, usage = os.wait4(proc.pid, 0)  # reap it here: its own rusage, not the benchmark's
    proc.returncode = os.waitstatus_to_exitcode(status)
    ms = (time.perf_counter() - start) * 1000
    return Run(ms, usage.ru_maxrss / 1024, proc.returncode, out)


@dataclass
class Series:
    """The samples of one figure."""

    name: str
    samples: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        """The median sample."""
        return statistics.median(self.samples)

    def line(self, base: Series | None, unit: str = "ms", budget: str = "") -> str:
        """`name  min / median / max  ratio`."""
        lo, mid, hi = min(self.samples), self.median, max(self.samples)
        ratio = f"{mid / base.median:6.2f}x {base.name}" if base is not None else ""
        tail = f"   (goal {budget})" if budget else ""
        return f"  {self.name:<46} {lo:7.1f} / {mid:7.1f} / {hi:7.1f} {unit}  {ratio}{tail}"


Step = Callable[[], float]
"""One timed action of a round: returns its milliseconds."""


def paired(steps: dict[str, Step], rounds: int, *, warmup: int = 1) -> dict[str, Series]:
    """Run the baseline then every step, `rounds` times (after `warmup` untimed rounds)."""
    env = dict(os.environ)
    series = {"python -c pass": Series("python -c pass")} | {name: Series(name) for name in steps}
    for n in range(warmup + rounds):
        timed = {"python -c pass": run(BASELINE, env).ms} | {name: step() for name, step in steps.items()}
        if n >= warmup:
            for name, ms in timed.items():
                series[name].samples.append(ms)
    return series


def header(title: str, rounds: int) -> None:
    """A section title and what its columns mean."""
    print(f"\n{title}  ({rounds} paired rounds; min / median / max; ratio of medians)")
