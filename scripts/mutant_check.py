"""Check survivors of a `make mutate` run against tests as they are now, without a whole re-run.

    python scripts/mutant_check.py loopx_core/store/ledger.py tests/test_mutation_kills_ledger.py
    python scripts/mutant_check.py MODULE TEST... --only x_unreadable__mutmut_1,x_read_all__mutmut_2

For each mutant the module's run left unkilled (or those `--only` names), the mutant's diff
(`mutmut show`, from build/mutate/<module>/) is applied to a flat copy of the work tree as it
is now and the given tests run against it: a failing run kills the mutant. Prints one line per
mutant and a count; exit 0 when every mutant checked was killed, 1 otherwise.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mutate import BIN, KILLED, MODULES, SCRATCH, clean_env, flat, snapshot, statuses

TIMEOUT = 300  # seconds; the kill tests take a few


def survivors(dest: Path, module: str) -> list[str]:
    """Every mutant the run in `dest` has checked and no test killed (so far, if it is still running)."""
    found = statuses(dest, module).items()
    return sorted(name for name, status in found if status not in KILLED and status != "not checked")


def apply(source: str, diff: str) -> str | None:
    """`source` with the mutant's one-hunk diff applied, or None unless its old lines occur exactly once.

    mutmut numbers a hunk from the start of its function and shows a method dedented, so the
    hunk is placed by its text, at the indentation where it is found.
    """
    body = [
        line
        for line in diff.splitlines()
        if line[:1] in (" ", "-", "+") and not line.startswith(("--- ", "+++ "))
    ]
    for indent in ("", "    ", "        "):

        def block(lines: list[str], indent: str = indent) -> str:
            return "".join((indent + line[1:] if line[1:] else "") + "\n" for line in lines)

        old = block([line for line in body if line[0] != "+"])
        if old and source.count(old) == 1:
            return source.replace(old, block([line for line in body if line[0] != "-"]))
    return None


def killed(copy: Path, target: Path, diff: str, tests: list[str]) -> bool | None:
    """Apply `diff` to `target` in `copy` and run `tests`; None when the diff does not apply."""
    original = target.read_text()
    mutated = apply(original, diff)
    if mutated is None:
        return None
    target.write_text(mutated)
    try:
        argv = [str(BIN / "python"), "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"]
        try:
            run = subprocess.run(
                [*argv, *tests], cwd=copy, env=clean_env(), capture_output=True, check=False, timeout=TIMEOUT
            )
        except subprocess.TimeoutExpired:
            return True  # as mutmut counts it: a mutant that hangs the tests is caught
        return run.returncode != 0
    finally:
        target.write_text(original)


def main(argv: list[str]) -> int:
    """Check the survivors of one module's run against the tests named."""
    only = next((a.split("=", 1)[1] for a in argv if a.startswith("--only=")), "")
    args = [a for a in argv if not a.startswith("--only=")]
    if len(args) < 2 or args[0] not in MODULES:
        print("usage: mutant_check.py MODULE TEST... [--only=NAME,...]", file=sys.stderr)
        return 2
    module, tests = args[0], args[1:]
    dest = SCRATCH / flat(module).replace("/", "__").removesuffix(".py")
    prefix = flat(module).removesuffix(".py").replace("/", ".") + "."
    names = [prefix + n for n in only.split(",")] if only else survivors(dest, module)
    alive = 0
    with tempfile.TemporaryDirectory(dir=SCRATCH) as tmp:
        copy = Path(tmp)
        snapshot(copy, worktree=True)
        for name in names:
            shown = subprocess.run(
                [str(BIN / "mutmut"), "show", name], cwd=dest, capture_output=True, text=True, check=False
            ).stdout
            diff = shown[shown.find("--- ") :]
            verdict = killed(copy, copy / flat(module), diff, tests)
            alive += verdict is not True
            print(
                f"{'killed' if verdict else 'does not apply' if verdict is None else 'ALIVE '}  {name}",
                flush=True,
            )
    print(f"{len(names) - alive} of {len(names)} killed")
    return 0 if alive == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
