"""should-run loads none of the standard-library modules it does not need (issue 15).

tests/test_hot_path.py pins the heavy third-party modules; this pins the standard library's
share of should-run's start: modules that a hot module used to import only for a rarely used
path (a write, a thread, OpenSSL's hashes, the effect lens). A regression (one of them back on
the path) fails here, deterministically, instead of showing up as a slower benchmark.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import json
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loopx_core.models.identity import sha256_hex
from tests.builders import demo_project
from tests.conftest import REPO, T0, run_loopx
from tests.probe import probe

WHO = ["-g", "demo", "-a", "builder"]
REMOVED = {
    "tempfile": "store/atomic.py imports it inside atomic_write_bytes (writes only)",
    "shutil": "came with tempfile",
    "random": "came with tempfile",
    "bz2": "came with shutil",
    "lzma": "came with shutil",
    "threading": "store/choice.py's pool lock is _thread.allocate_lock",
    "hashlib": "models/identity.sha256_hex uses the interpreter's own sha256",
    "_hashlib": "hashlib's OpenSSL binding (about 2.5 ms to load)",
}
"""Standard-library modules should-run must not import, and why each is gone."""
REMOVED_LOOPX = {
    "loopx_core.effects.lens": "no tick needs the lens: kernel.results takes the schema name from loopx_core.effects",
    "loopx_core.kernel.results": "decide/layers.py imports kernel.results only for an open turn",
    "loopx_core.kernel.algebra": "a tick lists the plan: loopx_core.kernel.plan, not the result algebra",
}
"""LoopX modules a plain tick (no open turn) must not import."""
DATACLASSES = ("dataclasses", "inspect", "ast", "dis", "tokenize")
"""dataclasses pulls inspect, and inspect ast, dis and tokenize (about 8 ms of a start)."""
PATHLIB = ("pathlib", "urllib.parse", "ipaddress", "ntpath", "fnmatch", "shlex")
"""pathlib and what it pulls (about 2.5 ms): a tick finds its root, chooses and reads its store,
and the Stop hook writes its counter, on string paths (store/paths.py answers as pathlib);
shlex: `commands.quote` is its `quote`."""
TYPING = ("typing", "contextlib", "warnings")
"""typing (with contextlib and warnings, about 2.5 ms): the tick's own modules name it for type
checkers only (`TYPE_CHECKING = False`) and its values are `Record`s, not NamedTuples."""
TYPING_OUTSIDE: dict[str, str] = {}
"""Modules outside the tick's own that may still import typing (or importlib, which loads warnings)
at module level, and how: none any more (a `TYPE_CHECKING = False` guard, `__import__` + sys.modules)."""
TICKS: dict[str, list[str]] = {
    "quota should-run": ["quota", "should-run", *WHO],
    "quota should-run --surface codex-app": ["quota", "should-run", *WHO, "--surface", "codex-app"],
    "hook claude-stop": ["hook", "claude-stop", *WHO],
    "hook claude-session-start": ["hook", "claude-session-start", *WHO],
}
"""What hosts run on every heartbeat or stop."""


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    return demo_project(tmp_path)


def loaded(root: Path, argv: list[str]) -> set[str]:
    """Every module one `loopx --root ROOT ARGV` (a should-run, answering 0) leaves loaded."""
    ran = probe(root, argv)
    assert ran.exit_code == 0 and json.loads(ran.stdout)["schema"] == "loopx_quota_should_run_v1"
    return set(ran.modules)


def test_should_run_imports_none_of_the_removed_modules(demo: Path) -> None:
    modules = loaded(demo, ["quota", "should-run", *WHO])
    assert modules & (set(REMOVED) | set(REMOVED_LOOPX)) == set()
    # the probe sees the tick's own imports (the C halves of json and datetime: tests/probe.START_UP)
    assert "_json" in modules and "_datetime" in modules and "loopx_core.jsontext" in modules


def test_a_busy_tick_imports_none_of_the_removed_modules(demo: Path) -> None:
    """An open turn, a scheduler entry and a ledger tail: the turn's results load, nothing written-only."""
    begun = run_loopx("turn", "begin", *WHO, "--todo-id", "t1", root=demo)
    assert begun.exit_code == 0, begun.stderr
    for args in (
        ["quota", "scheduler-ack", *WHO, "--rrule", "FREQ=HOURLY"],
        ["quota", "spend", *WHO, "--manual", "--slots", "1", "--turn-instance-id", "x"],
    ):
        assert run_loopx(*args, root=demo).exit_code == 0, args
    modules = loaded(demo, ["quota", "should-run", *WHO])
    assert "loopx_core.kernel.results" in modules  # the open turn was seen
    assert modules & {*REMOVED, "loopx_core.effects.lens"} == set()


def test_the_big_scenario_imports_none_of_the_removed_modules(tmp_path: Path) -> None:
    """200 todos and 2,000 spends (the benchmark's scenario): its ledger tail reads the same way."""
    sys.path.insert(0, str(REPO))
    from benchmarks.scenario import big_goal

    big_goal(tmp_path, T0)
    modules = loaded(tmp_path, ["quota", "should-run", "-g", "parser", "-a", "builder"])
    assert modules & (set(REMOVED) | set(REMOVED_LOOPX)) == set()


def test_should_run_imports_no_dataclasses(demo: Path) -> None:
    assert loaded(demo, ["quota", "should-run", *WHO]) & set(DATACLASSES) == set()


@given(st.text(st.characters(blacklist_categories=("Cs",))))
def test_sha256_hex_is_hashlibs(text: str) -> None:
    assert sha256_hex(text) == hashlib.sha256(text.encode()).hexdigest()


def test_a_stop_hook_that_writes_its_counter_imports_none_of_the_removed_modules(demo: Path) -> None:
    """The Stop hook writes its counter file every stop: the atomic write needs no tempfile."""
    event = json.dumps({"session_id": "s1", "cwd": str(demo)})
    ran = probe(demo, ["hook", "claude-stop", *WHO], stdin=event)
    assert ran.exit_code == 0
    assert list((demo / ".loopx" / "hooks").glob("claude-stop-*.json"))  # the counter was written
    assert ran.modules & set(REMOVED) == set()


def tick_modules(root: Path, command: str) -> frozenset[str]:
    """Every module one tick command (`TICKS`) leaves loaded; a hook gets its event on stdin."""
    ran = probe(root, TICKS[command], stdin=json.dumps({"session_id": "s1", "cwd": str(root)}))
    assert ran.exit_code == 0, command
    assert "loopx_core.ops.tick" in ran.modules  # the tick ran
    return ran.modules


@pytest.mark.parametrize("command", list(TICKS))
def test_a_tick_imports_no_pathlib(demo: Path, command: str) -> None:
    assert tick_modules(demo, command) & set(PATHLIB) == set()


@pytest.mark.parametrize("command", list(TICKS))
def test_a_tick_imports_no_typing(demo: Path, command: str) -> None:
    assert tick_modules(demo, command) & set(TYPING) == set()


@pytest.mark.parametrize("command", list(TICKS))
def test_a_tick_imports_no_collections_abc(demo: Path, command: str) -> None:
    """`collections.abc` names annotations only (under `TYPE_CHECKING`): no tick, a hook's registry
    of the built-in plugins included, pays for the module."""
    assert "collections.abc" not in tick_modules(demo, command)


def _unguarded_imports(module: str) -> set[str]:
    """The modules `module` imports at module level, outside `if TYPE_CHECKING:` (and outside a
    `try`'s handlers: an `except ImportError` fallback is another interpreter's path)."""
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None
    found: set[str] = set()

    def walk(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                walk(node.orelse)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module)
            elif isinstance(node, ast.If | ast.Try):
                walk(node.body)
                walk(node.orelse)

    walk(ast.parse(Path(spec.origin).read_text()).body)
    return found


@pytest.mark.parametrize("command", list(TICKS))
def test_the_ticks_own_modules_import_typing_only_for_type_checkers(demo: Path, command: str) -> None:
    """Deterministic, whoever else imports typing: no LoopX module on a tick's path but those
    of TYPING_OUTSIDE imports typing, contextlib, pathlib, shlex, dataclasses or importlib at
    module level (a new one fails here, not in a benchmark)."""
    watched = {"typing", "contextlib", "pathlib", "shlex", "dataclasses", "importlib"}
    offenders = {
        module: sorted(name for name in _unguarded_imports(module) if name.split(".")[0] in watched)
        for module in tick_modules(demo, command)
        if module.split(".")[0] in ("loopx_core", "loopx_claude_code", "loopx_codex_app", "loopx_dsh")
    }
    assert {m for m, names in offenders.items() if names} <= set(TYPING_OUTSIDE), offenders
