"""One `loopx` command in a fresh interpreter, and every module it left loaded.

The hot-path tests pin what each command may import: the probe runs `cli.entry.main` in a new
`python -c` (nothing imported before it but `sys`), with a bare
environment and no coverage, and reads `sys.modules` when the command is done.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

from tests.conftest import T0_ISO

REPO = Path(__file__).resolve().parent.parent
NO_COVERAGE = {"LOOPX_COVERAGE": "off"}
"""The environment entry that keeps `make test`'s coverage out of a probed process (coverage
itself imports hashlib, threading, dataclasses: scripts/coverage_startup.py honours it)."""


class Probed(NamedTuple):
    """What a probed command did: its exit code, its stdout, and the modules left loaded."""

    exit_code: int
    stdout: str
    modules: frozenset[str]

    def tops(self, names: tuple[str, ...] | set[str] | frozenset[str]) -> set[str]:
        """Which of the top-level packages `names` are loaded."""
        return {m.split(".")[0] for m in self.modules} & set(names)


_CODE = """\
import sys
from loopx_core.cli.entry import main
code = 0
try:
    main(sys.argv[1:])
except SystemExit as stop:
    code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
sys.stderr.write("\\n" + repr([code, sorted(sys.modules)]) + "\\n")
"""
"""The probe imports nothing of its own (no json): what it reports loaded, the command loaded."""


def probe(root: Path, argv: list[str], *, stdin: str = "", env: dict[str, str] | None = None) -> Probed:
    """Run `loopx --root ROOT ARGV` in a fresh interpreter with `stdin`; what it did and loaded."""
    proc = subprocess.run(
        [sys.executable, "-c", _CODE, "--root", str(root), *argv],
        input=stdin,
        capture_output=True,
        text=True,
        env={**NO_COVERAGE, "LOOPX_NOW": T0_ISO, "PATH": "", "HOME": str(root), **(env or {})},
        cwd=REPO,
        check=True,
    )
    code, modules = ast.literal_eval(proc.stderr.strip().splitlines()[-1])
    return Probed(code, proc.stdout, frozenset(modules))
