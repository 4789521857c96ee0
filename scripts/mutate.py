"""`make mutate`: mutation testing (mutmut 3) of the modules that carry LoopX's promises.

Each module is mutated in its own scratch copy of the last commit (build/mutate/<module>/), so
the work tree is never changed and runs of different modules do not share state. The copy is
laid out flat (installer/loopx_installer -> loopx_installer, plugins/<p> -> <p>, templates/...
-> loopx_templates) because mutmut names a mutant by its file's path and imports the mutated
copy from `mutants/` ahead of the editable install.

mutmut runs the module's test selection once to learn which tests call which function, then
runs each mutant against only the tests that reach its function, in-process. Tests that only
reach the module through a `loopx` subprocess run the unmutated installed code, so the
selections below are the in-process tests of each module.

    python scripts/mutate.py                         # every module below
    python scripts/mutate.py loopx_core/quota.py     # one or more, by repository path
    python scripts/mutate.py --worktree ...          # the files as they are, not the last commit
    python scripts/mutate.py --sample=40 ...         # a seeded random sample of 40 mutants a module
    python scripts/mutate.py --resume ...            # go on with the mutants a stopped run left

A whole run takes hours on a small machine (each mutant runs every selected test that reaches
its function), so `--sample=N` scores a fixed random sample instead (the same mutants for the
same source), and `--resume` keeps build/mutate/<module>/ and runs only what is still unchecked.

Writes build/mutate/<module>/report.md (score and each survivor's diff) and prints a summary.
Exit 0 whatever survives: the survivors are explained or listed in docs/testing.md.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCRATCH = REPO / "build" / "mutate"
BIN = Path(sys.executable).parent

_STORE = (
    "tests/test_store.py",
    "tests/adversarial/test_thread_locking.py",
    "tests/adversarial/test_corrupt_files.py",
)
_SETTLE = (
    "tests/test_settlement_laws.py",
    "tests/test_turn_cli.py",
    "tests/test_journal_inspection.py",
    "tests/adversarial/test_thread_locking.py",
    "tests/adversarial/test_corrupt_files.py",
)
_DECIDE = (
    "tests/test_precedence.py",
    "tests/test_should_run_matrix.py",
    "tests/test_quota.py",
    "tests/test_scheduler.py",
    "tests/test_cli.py",
    "tests/test_layers.py",
)
_INSTALL = (
    "tests/test_installer.py",
    "tests/test_merge.py",
    "tests/test_hooks.py",
    "tests/adversarial/test_install_merges.py",
    "tests/adversarial/test_install_paths.py",
)

# module (repository path) -> the in-process tests that exercise it
MODULES: dict[str, tuple[str, ...]] = {
    "loopx_core/quota.py": (*_DECIDE, "tests/adversarial/test_thread_locking.py"),
    "loopx_core/decide/assess.py": _DECIDE,
    "loopx_core/decide/scope.py": (*_DECIDE, "tests/test_turn_cli.py", "tests/test_mutation_kills_scope.py"),
    "loopx_core/settlement/steps.py": _SETTLE,
    "loopx_core/ops/lease.py": _SETTLE,  # was settlement/lease.py
    "loopx_core/store/files.py": (*_STORE, "tests/test_schema_refusal.py", "tests/test_quota.py"),
    "loopx_core/store/ledger.py": (*_STORE, "tests/test_schema_refusal.py", "tests/test_quota.py"),
    # not _SETTLE: every settlement test reads the index, so each mutant ran for minutes there
    "loopx_core/store/receipts.py": (*_STORE, "tests/test_schema_refusal.py"),
    "installer/loopx_installer/plan.py": _INSTALL,
    "installer/loopx_installer/merge.py": _INSTALL,
}

PACKAGES = (
    "loopx_core",
    "loopx_installer",
    "loopx_claude_code",
    "loopx_codex_app",
    "loopx_dsh",
    "loopx_templates",
)
FLATTEN = (("installer/", ""), ("plugins/", ""), ("templates/", ""))
NOT_COPIED = ("hosts/", "build/", "mutants/")

# mutmut's exit codes, grouped for the score
KILLED = {"killed", "timeout", "caught by type check", "segfault"}


def flat(path: str) -> str:
    """The path of a repository file inside the flat scratch copy."""
    for prefix, replacement in FLATTEN:
        if path.startswith(prefix):
            return replacement + path[len(prefix) :]
    return path


def snapshot(dest: Path, worktree: bool) -> None:
    """Lay the committed tree (or, with `worktree`, the files as they are now) out flat in `dest`."""
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp)
        if worktree:
            out = subprocess.run(
                ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
                cwd=REPO,
                capture_output=True,
                check=True,
            ).stdout.decode()
            paths = [p for p in out.split("\0") if p and (REPO / p).is_file()]
            source = REPO
        else:
            archive = subprocess.run(["git", "archive", "HEAD"], cwd=REPO, capture_output=True, check=True)
            subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
            paths = [str(p.relative_to(source)) for p in source.rglob("*") if p.is_file()]
        for path in paths:
            if path.startswith(NOT_COPIED):
                continue
            target = dest / flat(path)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source / path, target)


def selection(dest: Path, module: str) -> list[str]:
    """The module's tests that exist in the copy, and its tests/test_mutation_kills_<module>.py."""
    tests = [t for t in MODULES[module] if (dest / t).exists()]
    kills = dest / "tests" / f"test_mutation_kills_{Path(module).stem}.py"
    return [*tests, *([str(kills.relative_to(dest))] if kills.exists() else [])]


def failing_tests(dest: Path, tests: list[str]) -> list[str]:
    """Tests of the selection that fail on the unmutated copy: mutmut needs a green baseline."""
    run = subprocess.run(
        [
            str(BIN / "python"),
            "-m",
            "pytest",
            "-q",
            "-rfE",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            *tests,
        ],
        cwd=dest,
        env=clean_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    failed = []
    for line in run.stdout.splitlines():
        if line.startswith(("FAILED ", "ERROR ")):
            failed.append(line.split()[1])
    return failed


def clean_env() -> dict[str, str]:
    """The environment for runs in the copy: no coverage request, no project root override."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    for name in ("COVERAGE_PROCESS_START", "COVERAGE_FILE", "LOOPX_ROOT"):
        env.pop(name, None)
    return env


def mutmut_config(module: str, selection: list[str]) -> str:
    """The [tool.mutmut] table of the scratch copy's pyproject.toml."""
    return (
        "\n[tool.mutmut]\n"
        f"source_paths = {json.dumps(list(PACKAGES))}\n"
        f"only_mutate = {json.dumps([flat(module)])}\n"
        f"also_copy = {json.dumps(['docs', 'snapshots', 'README.md'])}\n"
        f"pytest_add_cli_args_test_selection = {json.dumps(selection)}\n"
        'pytest_add_cli_args = ["-p", "no:cacheprovider", "-p", "no:xdist", "-p", "no:randomly"]\n'
        "use_git_change_detection = false\n"
    )


def scratch(module: str) -> Path:
    """The module's scratch folder, build/mutate/<flat path with __>."""
    return SCRATCH / flat(module).replace("/", "__").removesuffix(".py")


def sample(dest: Path, module: str, size: int) -> list[str]:
    """A random sample of `size` of the module's mutants, seeded by the module and its source."""
    names = subprocess.run(  # in `dest`: mutmut reads its configuration from the working folder
        [str(BIN / "python"), "-c", _NAMES, flat(module)],
        cwd=dest,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    source = (dest / flat(module)).read_text()
    prefix = flat(module).removesuffix(".py").replace("/", ".") + "."
    chosen = random.Random(module + source).sample(names, min(size, len(names)))
    return sorted(prefix + name for name in chosen)


_NAMES = (
    "import sys; from mutmut.mutation.file_mutation import mutate_file_contents as m; "
    "print(*m(sys.argv[1], open(sys.argv[1]).read()).mutant_names)"
)


def prepare(module: str, worktree: bool) -> tuple[Path, list[str]]:
    """A fresh flat copy with mutmut configured for `module`; the tests deselected as failing."""
    dest = scratch(module)
    if dest.exists():
        shutil.rmtree(dest)
    snapshot(dest, worktree)
    if not (dest / flat(module)).exists():
        raise SystemExit(f"{module}: not in the {'work tree' if worktree else 'committed tree'}")
    tests = selection(dest, module)
    failing = failing_tests(dest, tests)
    tests += [arg for nodeid in failing for arg in ("--deselect", nodeid)]
    with (dest / "pyproject.toml").open("a") as config:
        config.write(mutmut_config(module, tests))
    return dest, failing


def statuses(dest: Path, module: str) -> dict[str, str]:
    """mutant name -> mutmut status, from the module's .meta file."""
    from mutmut.stats import status_by_exit_code

    meta = json.loads((dest / "mutants" / (flat(module) + ".meta")).read_text())
    return {name: status_by_exit_code[code] for name, code in meta["exit_code_by_key"].items()}


def report(
    dest: Path, module: str, seconds: float, failing: list[str]
) -> tuple[int, int, Counter[str], list[str]]:
    """Write report.md for the module; return (killed, total, counts, survivors)."""
    every = statuses(dest, module)
    by_name = {name: status for name, status in every.items() if status != "not checked"}
    counts = Counter(by_name.values())
    killed = sum(n for status, n in counts.items() if status in KILLED)
    survivors = sorted(name for name, status in by_name.items() if status not in KILLED)
    lines = [
        f"# {module}: {killed}/{len(by_name)} killed ({score(killed, len(by_name))}) in {seconds:.0f}s"
        f" ({len(by_name)} of its {len(every)} mutants checked)",
        "",
        ", ".join(f"{status}: {n}" for status, n in sorted(counts.items())),
        "",
        *(f"deselected (fails unmutated): {nodeid}" for nodeid in failing),
        "",
    ]
    for name in survivors:
        shown = subprocess.run(
            [str(BIN / "mutmut"), "show", name], cwd=dest, capture_output=True, text=True, check=False
        )
        lines += ["```diff", shown.stdout.strip(), "```", ""]
    (dest / "report.md").write_text("\n".join(lines))
    return killed, len(by_name), counts, survivors


def score(killed: int, total: int) -> str:
    """`87.5%`."""
    return f"{100.0 * killed / total:.1f}%" if total else "-"


def run_mutmut(dest: Path, names: list[str]) -> subprocess.CompletedProcess[bytes]:
    """`mutmut run` in `dest` (only `names`, if any), its output in mutmut.log."""
    with (dest / "mutmut.log").open("w") as log:
        return subprocess.run(
            [str(BIN / "mutmut"), "run", "--max-children", "2", *names],
            cwd=dest,
            env=clean_env(),
            stdout=log,
            stderr=subprocess.STDOUT,
            check=False,
        )


def main(argv: list[str]) -> int:
    """Mutate each module asked for (all by default) and print the scores."""
    worktree, resume = "--worktree" in argv, "--resume" in argv
    size = int(next((a.split("=", 1)[1] for a in argv if a.startswith("--sample=")), "0"))
    argv = [a for a in argv if a not in ("--worktree", "--resume") and not a.startswith("--sample=")]
    modules = argv or list(MODULES)
    unknown = [m for m in modules if m not in MODULES]
    if unknown:
        print(
            f"not a mutated module: {', '.join(unknown)} (see MODULES in scripts/mutate.py)", file=sys.stderr
        )
        return 2
    rows = []
    for module in modules:
        started = time.monotonic()
        if resume and (scratch(module) / "pyproject.toml").exists():
            dest, failing = scratch(module), []
        else:
            dest, failing = prepare(module, worktree)
        for nodeid in failing:
            print(f"{module}: deselected, fails unmutated: {nodeid}", flush=True)
        names = sample(dest, module, size) if size else []
        if names and resume and (dest / "mutants" / (flat(module) + ".meta")).exists():
            done = statuses(dest, module)
            names = [name for name in names if done.get(name, "not checked") == "not checked"]
        run = run_mutmut(dest, names) if names or not size else subprocess.CompletedProcess([], 0)
        seconds = time.monotonic() - started
        if run.returncode != 0 or not (dest / "mutants" / (flat(module) + ".meta")).exists():
            print(f"{module}: mutmut failed (exit {run.returncode}), see {dest.relative_to(REPO)}/mutmut.log")
            rows.append(f"{module:<36} failed")
            continue
        killed, total, counts, survivors = report(dest, module, seconds, failing)
        rows.append(
            f"{module:<36} {killed:>4}/{total:<4} {score(killed, total):>6}  {seconds:>5.0f}s  "
            + ", ".join(f"{s}: {n}" for s, n in sorted(counts.items()) if s not in KILLED)
        )
        print(rows[-1], flush=True)
        for name in survivors:
            print(f"    not killed: {name}", flush=True)
    print("\nmodule                               killed/total  score   time  not killed")
    print("\n".join(rows))
    print(f"\nsurvivors with their diffs: {SCRATCH.relative_to(REPO)}/<module>/report.md")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
