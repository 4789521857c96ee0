"""Class: what `loopx hook ...` reads. Its stdin comes from the host and its counter files from the
disk: whatever they hold, the hook answers with one clear line or a safe default (let the host
stop), never a traceback, and never exit 2 (hosts read 2 as "block").

The observed cases of issue 9 (item 7, hook part) are one test each; a generated-input test
drives the Stop hook with arbitrary stdin.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import Cli, CliResult, Project
from tests.scenarios import SCENARIOS

STOP = ("hook", "claude-stop", "-g", "g", "-a", "builder")


@pytest.fixture
def running(project: Project) -> Project:
    """A goal where should-run says run, so the Stop hook reads (and writes) its counter."""
    SCENARIOS["eligible_workspace"](project)
    return project


def stop(cli: Cli, stdin: str | bytes) -> CliResult:
    """Run the Stop hook in-process (an exception fails the test) with `stdin`."""
    result = cli(*STOP, input=stdin)  # type: ignore[arg-type]
    assert "Traceback" not in result.stdout + result.stderr
    assert result.exit_code in (0, 1), result
    return result


def event(active: bool = False, session: Any = "s-1") -> str:
    """A Claude Code Stop event."""
    return json.dumps({"session_id": session, "hook_event_name": "Stop", "stop_hook_active": active})


def _one_error_line(result: CliResult) -> None:
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("loopx: hook claude-stop: ")


@pytest.mark.parametrize("deep", ["[" * 200_000 + "]" * 200_000, '{"a":' * 200_000 + "1" + "}" * 200_000])
def test_deeply_nested_json_is_one_line(cli: Cli, running: Project, deep: str) -> None:
    """Item 7: 200,000-deep JSON on `loopx hook` stdin was a traceback (RecursionError)."""
    result = stop(cli, deep)
    _one_error_line(result)
    assert "nested too deeply" in result.stderr or "JSON object" in result.stderr


@pytest.mark.parametrize("garbage", [b"\xff\xfe\x00\x01", b"{not json", b"\x00", b'{"a": NaN'])
def test_garbage_on_stdin_is_one_line(cli: Cli, running: Project, garbage: bytes) -> None:
    """Garbage (not UTF-8, not JSON) on stdin is one line, exit 1."""
    _one_error_line(stop(cli, garbage))


@pytest.mark.parametrize("payload", ["[1]", "1", "null", '"text"', "true"])
def test_json_that_is_not_an_object_is_one_line(cli: Cli, running: Project, payload: str) -> None:
    """JSON that is not an object is refused the same way."""
    result = stop(cli, payload)
    _one_error_line(result)
    assert "must be a JSON object" in result.stderr


def _counter(project: Project) -> Path:
    cli_counters = list((project.store.state_dir / "hooks").glob("claude-stop-*.json"))
    assert len(cli_counters) == 1
    return cli_counters[0]


@pytest.mark.parametrize(
    "content",
    [
        "garbage",
        "[]",
        "{}",
        '{"blocks": -1}',
        '{"blocks": "3"}',
        '{"blocks": 1e999}',
        '{"blocks": 1, "x": 2}',
        "",
        "\0" * 13,  # what a crash may leave of the counter, written without an fsync
    ],
)
def test_a_corrupt_stop_counter_lets_claude_stop(cli: Cli, running: Project, content: str) -> None:
    """Item 7: a corrupt Claude stop counter was a traceback; now Claude may stop, and counting starts afresh."""
    assert json.loads(stop(cli, event()).stdout)["decision"] == "block"
    counter = _counter(running)
    counter.write_text(content)
    answer = stop(cli, event(active=True))
    assert answer.exit_code == 0 and answer.stdout == ""  # the safe default: do not block
    assert "stop counter" in answer.stderr and answer.stderr.count("\n") == 1
    again = stop(cli, event(active=True))
    assert json.loads(again.stdout)["decision"] == "block"  # the corrupt file was reset
    assert json.loads(counter.read_text()) == {"blocks": 1}


def test_a_stop_counter_that_is_a_folder_answers_like_a_corrupt_one(cli: Cli, running: Project) -> None:
    """A wrong file type (a folder) answers like a corrupt file: Claude may stop, every time."""
    stop(cli, event())
    counter = _counter(running)
    counter.unlink()
    counter.mkdir()
    for _ in range(2):
        answer = stop(cli, event(active=True))
        assert answer.exit_code == 0 and answer.stdout == "" and "stop counter" in answer.stderr
    assert counter.is_dir()


def test_a_bad_max_blocks_setting_falls_back_to_the_default(
    cli: Cli, running: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`LOOPX_STOP_MAX_BLOCKS=abc` (or huge, or negative) is ignored, not a crash."""
    for value in ("abc", "-3", "1e9", "99999999999999999999"):
        monkeypatch.setenv("LOOPX_STOP_MAX_BLOCKS", value)
        assert json.loads(stop(cli, event(session=value)).stdout)["decision"] == "block"


def test_odd_field_types_in_the_event_are_tolerated(cli: Cli, running: Project) -> None:
    """session_id, stop_hook_active and cwd of any JSON type: an answer, never a crash."""
    for session in (None, 5, [1, 2], {"a": 1}, "x" * 100_000, "\ud800"):
        payload = json.dumps({"session_id": session, "stop_hook_active": [1], "cwd": {"x": 1}})
        assert stop(cli, payload).exit_code == 0


@st.composite
def stdins(draw: st.DrawFn) -> bytes:
    """Arbitrary bytes, arbitrary JSON, or a Stop event with arbitrary field values."""
    value = st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
        lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=10), c, max_size=3),
        max_leaves=10,
    )
    kind = draw(st.sampled_from(["bytes", "json", "event"]))
    if kind == "bytes":
        return draw(st.binary(max_size=64))
    if kind == "json":
        return json.dumps(draw(value)).encode()
    fields = {
        k: draw(value)
        for k in ("session_id", "stop_hook_active", "cwd", "hook_event_name")
        if draw(st.booleans())
    }
    return json.dumps(fields).encode()


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(stdin=stdins())
def test_any_stdin_gets_an_answer(cli: Cli, running: Project, stdin: bytes) -> None:
    """Any stdin: exit 0 with an empty or JSON answer, or exit 1 with one line; never a traceback or exit 2."""
    result = stop(cli, stdin)
    if result.exit_code == 0:
        assert result.stdout == "" or json.loads(result.stdout)["decision"] == "block"
    else:
        _one_error_line(result)
    assert str(running.root) not in result.stderr


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=120)
)
def test_any_hook_name_is_one_error_line(cli: Cli, name: str) -> None:
    """The name comes from a host's config: an unknown one (newlines, control characters, huge) is one line."""
    if name in ("claude-stop", "claude-session-start") or name.startswith("-"):
        return  # a known event, or an option the CLI parses as such
    result = cli("hook", name, input="{}")
    assert "Traceback" not in result.stdout + result.stderr
    assert result.exit_code == 1 and result.stdout == "", result
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("loopx: hook "), result.stderr
    assert "unknown hook" in result.stderr and len(result.stderr) < 600
