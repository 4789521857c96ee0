"""The Claude Code hooks fed real hook JSON on stdin: block only while should-run says run."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from loopx_core.clock import iso
from loopx_core.store.files import FileStore
from tests.conftest import T0, Project, run_loopx
from tests.scenarios import SCENARIOS


def stop_event(session: str = "s-1", active: bool = False, cwd: str = "/tmp") -> str:
    """What Claude Code sends a Stop hook."""
    return json.dumps(
        {
            "session_id": session,
            "transcript_path": f"/tmp/{session}.jsonl",
            "cwd": cwd,
            "hook_event_name": "Stop",
            "stop_hook_active": active,
        }
    )


def hook(
    root: Path, name: str, stdin: str, *args: str, now: str | None = None, env: dict[str, str] | None = None
):  # type: ignore[no-untyped-def]
    import os
    import subprocess

    from tests.conftest import LOOPX_BIN

    full = {**os.environ, **(env or {})}
    if now:
        full["LOOPX_NOW"] = now
    return subprocess.run(
        [str(LOOPX_BIN), "--root", str(root), "hook", name, *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=full,
        check=False,
    )


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_stop_hook_in_every_state(tmp_path: Path, name: str) -> None:
    root = tmp_path / "p"
    root.mkdir()
    store = FileStore(root)
    store.init()
    ask = SCENARIOS[name](Project(root, store))
    when = iso(T0 + timedelta(minutes=ask.minutes))
    packet_run = run_loopx("quota", "should-run", "-g", "g", "-a", ask.agent_id, root=root, now=when)
    packet = json.loads(packet_run.stdout)
    answer = hook(root, "claude-stop", stop_event(), "-g", "g", "-a", ask.agent_id, now=when)
    assert answer.returncode == 0, answer.stderr
    if packet["decision"] == "run":
        decision = json.loads(answer.stdout)
        assert decision["decision"] == "block"
        for action in packet["interaction_contract"]["cli_channel"]["next_cli_actions"]:
            assert action in decision["reason"]
    else:
        assert answer.stdout == "", (packet["quota"]["state"], answer.stdout)
    if packet["quota"]["state"] in (
        "paused",
        "throttled",
        "operator_gate",
        "waiting",
        "focus_wait",
        "blocked_health",
    ):
        assert answer.stdout == ""


def test_reentry_is_bounded(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    store = FileStore(root)
    store.init()
    SCENARIOS["eligible_workspace"](Project(root, store))
    env = {"LOOPX_STOP_MAX_BLOCKS": "2", "LOOPX_NOW": "2026-11-29T12:00:00Z"}
    answers = [
        hook(root, "claude-stop", stop_event(active=n > 0), "-g", "g", "-a", "builder", env=env).stdout
        for n in range(4)
    ]
    assert [bool(a) for a in answers] == [True, True, False, False]
    fresh = hook(root, "claude-stop", stop_event(session="s-2"), "-g", "g", "-a", "builder", env=env)
    assert json.loads(fresh.stdout)["decision"] == "block"  # a new session starts counting again


def test_goal_and_agent_from_the_environment(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    store = FileStore(root)
    store.init()
    SCENARIOS["eligible_workspace"](Project(root, store))
    env = {"LOOPX_GOAL_ID": "g", "LOOPX_AGENT_ID": "builder", "LOOPX_NOW": "2026-11-29T12:00:00Z"}
    assert json.loads(hook(root, "claude-stop", stop_event(), env=env).stdout)["decision"] == "block"
    assert hook(root, "claude-stop", stop_event()).stdout == ""  # no goal: never block


def test_session_start_prints_context(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    store = FileStore(root)
    store.init()
    SCENARIOS["throttled"](Project(root, store))
    out = hook(
        root,
        "claude-session-start",
        json.dumps({"hook_event_name": "SessionStart", "source": "startup"}),
        "-g",
        "g",
        "-a",
        "builder",
        now="2026-11-29T13:00:00Z",
    )
    assert out.returncode == 0
    assert out.stdout.startswith("LoopX goal g for agent builder: throttled, 7/7 slots.")
    assert "/loopx" in out.stdout


@pytest.mark.parametrize(
    ("stdin", "args"),
    [
        ("not json", ["-g", "g", "-a", "a"]),
        ("[1]", ["-g", "g", "-a", "a"]),
        ("{}", ["-g", "Bad/Id", "-a", "a"]),
    ],
)
def test_hook_errors_never_exit_2(tmp_path: Path, stdin: str, args: list[str]) -> None:
    FileStore(tmp_path).init()
    out = hook(tmp_path, "claude-stop", stdin, *args)
    assert out.returncode == 1 and out.stdout == "" and out.stderr.startswith("loopx: hook claude-stop: ")


def test_unknown_hook(tmp_path: Path) -> None:
    out = hook(tmp_path, "vim-save", "{}")
    assert out.returncode == 1 and "unknown hook 'vim-save'" in out.stderr


def test_events_are_dispatched_to_the_host_declaring_them() -> None:
    from loopx_core.hosts import HookAnswer, HookCall
    from loopx_core.hosts.manager import events, get_plugin_manager

    pm = get_plugin_manager()
    assert {event: h.name for event, h in events(pm).items()} == {
        "claude-session-start": "claude-code",
        "claude-stop": "claude-code",
    }
    call = HookCall(payload={}, goal_id=None, agent_id=None, root=None)
    answer = events(pm)["claude-stop"].handle_hook_event("claude-stop", call)
    assert answer == HookAnswer()  # no goal selected: never block


def _settle_turns(root: Path, count: int, summary: str) -> None:
    """Run `count` governed turns through the packets' own commands (placeholders filled)."""
    import shlex

    for n in range(count):
        packet = json.loads(
            run_loopx("quota", "should-run", "-g", "g", "-a", "builder", root=root, now=None).stdout
        )
        for action in packet["interaction_contract"]["cli_channel"]["next_cli_actions"]:
            words = [
                w.replace("<summary>", f"{summary} {n}").replace("<evidence>", "ok")
                for w in shlex.split(action)
            ]
            done = run_loopx(*words[1:], root=root, now=None)
            assert done.exit_code == 0, (action, done.stderr)


def _session_start(root: Path) -> str:
    out = hook(root, "claude-session-start", json.dumps({"source": "startup"}), "-g", "g", "-a", "builder")
    assert out.returncode == 0 and out.stderr == "", out.stderr
    return out.stdout


@pytest.mark.slow
def test_session_start_shows_the_last_three_runs_newest_first(tmp_path: Path) -> None:
    from tests.builders import build_project

    root = tmp_path / "p"
    build_project(root, todo_count=5, compute=1.0)
    assert "Last runs: none yet." in _session_start(root)
    _settle_turns(root, 4, "Did  the\nthing " + "x" * 120)
    lines = _session_start(root).splitlines()
    at = lines.index("Last runs (newest first):")
    runs = lines[at + 1 : at + 4]
    assert [r.split(" on ")[1].split(" ")[0] for r in runs] == ["t4", "t3", "t2"], runs
    assert all(
        r.startswith("- ") and " builder on " in r and "(passed, todo_worked): Did the thing" in r
        for r in runs
    )
    assert all(len(r) < 200 and r.endswith("...") for r in runs), runs  # one short line each
    assert lines[at + 4].startswith("Use the /loopx skill")


def test_session_start_with_a_damaged_history_still_answers(tmp_path: Path) -> None:
    from tests.builders import build_project

    root = tmp_path / "p"
    build_project(root, todo_count=2, compute=1.0)
    _settle_turns(root, 1, "Done")
    index = root / ".loopx/goals/g/runs/index.jsonl"
    index.write_text(index.read_text() + "{not json\n")
    out = _session_start(root)
    assert "Last runs: unreadable (" in out and str(root) not in out, out
    assert out.startswith("LoopX goal g for agent builder:")


def test_the_stop_reason_names_a_loopx_that_is_not_on_path(tmp_path: Path) -> None:
    from tests import facades
    from tests.conftest import LOOPX_BIN

    root = tmp_path / "p"
    root.mkdir()
    FileStore(root).init()
    SCENARIOS["eligible_workspace"](Project(root, FileStore(root)))
    when = "2026-11-29T12:00:00Z"
    elsewhere = tmp_path / "my tools"
    elsewhere.mkdir()
    (elsewhere / "loopx").symlink_to(LOOPX_BIN)
    cases = [
        (f"{LOOPX_BIN.parent}:/usr/bin:/bin", None),  # on PATH
        (f"{elsewhere}:/usr/bin:/bin", None),  # on PATH by another name of the same executable
        ("/usr/bin:/bin", [str(LOOPX_BIN)]),  # off PATH: the hook names itself
    ]
    for path, named in cases:
        out = hook(
            root, "claude-stop", stop_event(), "-g", "g", "-a", "builder", now=when, env={"PATH": path}
        )
        reason = json.loads(out.stdout)["reason"]
        assert facades.loopx_command_named(reason) == (named or ["loopx"]), reason
        assert facades.numbered_actions(reason)


def _tree(root: Path) -> dict[str, bytes]:
    """Every file under `root/.loopx`, by relative path (what a hook leaves behind)."""
    dot = root / ".loopx"
    return {str(p.relative_to(dot)): p.read_bytes() for p in sorted(dot.rglob("*")) if p.is_file()}


PARITY_CASES = [
    (["claude-stop", "-g", "g", "-a", "builder"], stop_event(), {}),
    (["claude-stop", "--goal-id=g", "--agent-id=builder"], stop_event(active=True), {}),
    (["claude-stop"], stop_event(), {"LOOPX_GOAL_ID": "g", "LOOPX_AGENT_ID": "builder"}),
    (["claude-stop", "-g", "g", "-a", "builder"], stop_event(active=True), {"LOOPX_STOP_MAX_BLOCKS": "0"}),
    (["claude-session-start", "-g", "g", "-a", "builder"], "{}", {}),
    (["claude-session-start"], "", {}),
    (["claude-stop", "-g", "g", "-a", "builder"], "[1]", {}),
    (["claude-stop", "-g", "g", "-a", "builder"], "{", {}),
    (["claude-stop", "-g", "Bad", "-a", "builder"], "{}", {}),
    (["claude-stop", "-g", "nope", "-a", "builder"], "{}", {}),
    (["no-such-hook", "-g", "g", "-a", "builder"], "{}", {}),
    (["claude-stop", "-g", "g", "-a", "builder"], "{}", {"LOOPX_PLUGINS": "-claude-code"}),
    (["claude-stop", "-g", "g", "-a", "builder"], "{}", {"LOOPX_PLUGINS": "dsh"}),
]


@pytest.mark.parametrize(("args", "stdin", "env"), PARITY_CASES)
def test_fast_hook_entry_answers_as_typer(
    tmp_path: Path, args: list[str], stdin: str, env: dict[str, str]
) -> None:
    """The fast entry and typer's command: the same exit code, bytes out and files left behind."""
    import shutil

    from loopx_core.cli import fast

    assert fast.parse(["hook", *args]) is not None  # the fast entry answers this one itself
    base = tmp_path / "base"
    base.mkdir()
    store = FileStore(base)
    store.init()
    SCENARIOS["eligible_workspace"](Project(base, store))
    runs = base / ".loopx" / "goals" / "g" / "runs"
    runs.mkdir(exist_ok=True)
    line = {"schema_version": 1, "run_id": "r1", "at": "2026-01-01T00:00:00Z", "agent_id": "builder"}
    line |= {"todo_id": "t1", "turn_key": "k", "validation": "passed", "summary": "Parsed it"}
    (runs / "index.jsonl").write_text(json.dumps(line) + "\n" + json.dumps({**line, "run_id": "r2"}) + "\n")
    seen = []
    for name, extra in (("fast", {}), ("typer", {"LOOPX_NO_FAST_PATH": "1"})):
        root = tmp_path / name
        shutil.copytree(base, root)
        proc = hook(root, args[0], stdin, *args[1:], env={**env, **extra})
        seen.append((proc.returncode, proc.stdout.replace(str(root), "<root>"), proc.stderr, _tree(root)))
    assert seen[0] == seen[1]
    assert seen[0][0] in (0, 1) and "Traceback" not in seen[0][2]
    if args == ["claude-session-start", "-g", "g", "-a", "builder"]:
        assert "Last runs (newest first):\n- 2026-01-01T00:00:00Z builder on t1 (passed" in seen[0][1]
