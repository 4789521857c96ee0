"""Generated source as `ruff format` leaves it: what the generators write and `--check` compares."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def ruff_formatted(text: str, target: Path, what: str) -> str:
    """`text` (the generated `what`, bound for `target`) formatted in the repository's style."""
    ruff = Path(sys.executable).parent / "ruff"
    proc = subprocess.run(
        [str(ruff), "format", "--stdin-filename", str(target), "-"],
        input=text,
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
    )
    if proc.returncode != 0:
        raise SystemExit(f"ruff format failed on the generated {what}: {proc.stderr.strip()}")
    return proc.stdout
