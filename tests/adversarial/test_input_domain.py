"""Class: one input domain for every number, id and time (issue 9, item 6).

Observed: `--slot-minutes inf` was stored as `null` (then every command exited 4), `1e300`
was accepted and crashed `status` and `should-run` with OverflowError, NaN/inf/huge minutes
gave tracebacks or printed `Infinity`, an id with a trailing newline passed the id check,
and a garbage `LOOPX_NOW` was not a clear usage error. Here the CLI, the ops functions (what
the MCP tools call) and the state files are shown to refuse the same values, and a refusal
never changes a file.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.cli.output import dumps
from loopx_core.errors import LoopxError, UsageError
from loopx_core.ids import is_valid_id
from loopx_core.models.constants import MAX_MINUTES
from loopx_core.models.domain import check, describe
from loopx_core.ops import gates, goals, spend, todos
from loopx_core.schema import domain
from tests.conftest import T0, Cli, CliResult, Project, run_loopx

HOSTILE_NUMBERS = ["inf", "-inf", "nan", "1e300", "-1e300", "1e999", "-1"]
QUOTA_OPTIONS = ["--compute", "--window-hours", "--slot-minutes", "--min-interval-minutes"]


def strict_json(text: str) -> Any:
    """Parse `text` as JSON as a strict reader would: `NaN` and `Infinity` are not JSON."""

    def refuse(token: str) -> None:
        raise ValueError(f"{token} is not JSON")

    return json.loads(text, parse_constant=refuse)


def files(root: Path) -> dict[str, bytes]:
    """Every state file's bytes (locks excluded: they are not state)."""
    state = root / ".loopx"
    return {
        str(p.relative_to(state)): p.read_bytes()
        for p in sorted(state.rglob("*"))
        if p.is_file() and "locks" not in p.relative_to(state).parts
    }


def refused(result: CliResult, code: int = 2) -> None:
    """One error line, the documented exit code, a strict JSON error object, no traceback."""
    assert result.exit_code == code, (result.exit_code, result.stderr)
    assert result.stderr.startswith("loopx: error: ") and result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert strict_json(result.stdout)["error"]["exit_code"] == code


@pytest.fixture
def demo(cli: Cli, project: Project) -> Cli:
    goals.add_goal(project.store, "demo", "Ship", T0)
    goals.register_agent(project.store, "builder", [], T0)
    todos.add_todo(project.store, "demo", "Write parser", T0)
    return cli


def still_healthy(demo: Cli) -> None:
    """Every goal still answers: status and should-run exit 0 with strict JSON."""
    for args in (["status", "-f", "json"], ["quota", "should-run", "-g", "demo", "-a", "builder"]):
        result = demo(*args)
        assert result.exit_code == 0, (args, result.stderr)
        strict_json(result.stdout)


@pytest.mark.parametrize("option", ["--slot-minutes", "--window-hours", "--min-interval-minutes"])
@pytest.mark.parametrize("value", HOSTILE_NUMBERS)
def test_quota_policy_inf_nan_huge_refused(demo: Cli, project: Project, option: str, value: str) -> None:
    before = files(project.root)
    refused(demo("goal", "add", "-g", "other", "-o", "x", option, value, "-f", "json"))
    refused(demo("goal", "configure", "-g", "demo", option, value, "-f", "json"))
    assert files(project.root) == before
    still_healthy(demo)


def test_inf_is_never_stored_as_null(demo: Cli, project: Project) -> None:
    demo("goal", "add", "-g", "other", "-o", "x", "--slot-minutes", "inf")
    registry = json.loads(project.store.registry_path.read_text())
    assert "other" not in registry["goals"]
    assert all(None not in g["quota"].values() for g in registry["goals"].values())


@pytest.mark.parametrize(
    "args",
    [
        ["todo", "claim", "-g", "demo", "-t", "t1", "-a", "builder", "--lease-minutes"],
        ["focus", "wait", "-g", "demo", "--reason", "ci", "--for-minutes"],
        ["focus", "wait", "-g", "demo", "--reason", "ci", "--for-minutes", "5", "--poll-every-minutes"],
        ["quota", "spend", "-g", "demo", "-a", "builder", "--manual", "--minutes"],
    ],
    ids=["lease-minutes", "for-minutes", "poll-every-minutes", "minutes"],
)
@pytest.mark.parametrize("value", [*HOSTILE_NUMBERS, "1576801", "0"])
def test_minutes_options_refused_with_valid_json(
    demo: Cli, project: Project, args: list[str], value: str
) -> None:
    if value == "0" and args[-1] == "--minutes":
        return  # a zero-minute manual charge is in the domain (it charges the 1-slot minimum)
    before = files(project.root)
    refused(demo(*args, value, "-f", "json"))
    assert files(project.root) == before
    still_healthy(demo)


@pytest.mark.parametrize("value", ["inf", "nan", "1e300"])
def test_turn_begin_lease_minutes_refused(demo: Cli, value: str) -> None:
    refused(
        demo(
            "turn", "begin", "-g", "demo", "-a", "builder", "-t", "t1", "--lease-minutes", value, "-f", "json"
        )
    )


@pytest.mark.parametrize("value", ["0", "1000000001", "-5", "99999999999999999999999"])
def test_slots_and_priority_bounded(demo: Cli, project: Project, value: str) -> None:
    before = files(project.root)
    refused(demo("quota", "spend", "-g", "demo", "-a", "builder", "--manual", "--slots", value, "-f", "json"))
    if value != "0":
        refused(demo("todo", "add", "-g", "demo", "--title", "x", "-p", value, "-f", "json"))
    assert files(project.root) == before


ID_OPTIONS = [
    ["goal", "add", "-o", "x", "-g"],
    ["agent", "register", "-a"],
    ["todo", "add", "-g", "demo", "--title", "x", "--todo-id"],
    ["todo", "add", "-g", "demo", "--title", "x", "--bound-agent"],
    ["todo", "add", "-g", "demo", "--title", "x", "--exclude-agent"],
    ["todo", "claim", "-g", "demo", "-a", "builder", "-t"],
    ["gate", "open", "-g", "demo", "--title", "x", "--gate-id"],
    ["quota", "void", "-g", "demo", "--event-id"],
    ["quota", "should-run", "-a", "builder", "-g"],
    ["goal", "show", "-g"],
]


@pytest.mark.parametrize("args", ID_OPTIONS, ids=lambda a: " ".join(a[:2]) + " " + a[-1])
@pytest.mark.parametrize("bad", ["demo\n", "t1\n", "builder\n", "a\nb", "..", "Ünï", "", "x" * 65])
def test_ids_match_in_full(demo: Cli, project: Project, args: list[str], bad: str) -> None:
    before = files(project.root)
    result = demo(*args, bad, "-f", "json")
    if args[:2] == ["quota", "should-run"]:
        assert result.exit_code == 2 and "Traceback" not in result.stderr
    else:
        refused(result)
    assert "invalid" in result.stderr
    assert files(project.root) == before


@given(st.text(max_size=70))
@settings(max_examples=300, deadline=None)
def test_id_check_is_one_full_match(value: str) -> None:
    """The Python check, the record kind and the pydantic type agree on every string; all match in full."""
    from pydantic import TypeAdapter, ValidationError

    try:
        TypeAdapter(domain.Id).validate_python(value)
        model_ok = True
    except ValidationError:
        model_ok = False
    try:
        check("--goal-id", "Id", value)
        kind_ok = True
    except UsageError:
        kind_ok = False
    assert model_ok == is_valid_id(value) == kind_ok
    if value.endswith("\n"):
        assert not model_ok


@pytest.mark.parametrize(
    "value",
    [
        "abc",
        "2026-11-29T12:00:00",
        "9999-12-31T23:59:59-05:00",
        "0001-01-01T00:00:00+01:00",
        "1969-12-31T23:59:59Z",
        "3000-01-01T00:00:00Z",
        " ",
        "x" * 5000,
    ],
)
def test_loopx_now_garbage_is_a_usage_error(demo: Cli, project: Project, value: str) -> None:
    before = files(project.root)
    for args in (["status", "-f", "json"], ["todo", "add", "-g", "demo", "--title", "y"]):
        result = demo(*args, now=value)
        assert result.exit_code == 2, (args, result.stderr)
        assert result.stderr.startswith("loopx: error: ") and "LOOPX_NOW" in result.stderr
        assert len(result.stderr) < 300  # a huge value is never echoed whole
    assert files(project.root) == before


def test_loopx_now_garbage_real_process(project: Project) -> None:
    goals.add_goal(project.store, "demo", "Ship", T0)
    goals.register_agent(project.store, "builder", [], T0)
    for args in (["status"], ["quota", "should-run", "-g", "demo", "-a", "builder"]):
        result = run_loopx(*args, root=project.root, now="next tuesday")
        assert result.exit_code == 2, result.stderr
        assert "LOOPX_NOW" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize(
    "value", ["9999-12-31T23:59:59-05:00", "0001-01-01T00:00:00+01:00", "3000-01-01T00:00:00Z"]
)
def test_focus_until_out_of_range(demo: Cli, project: Project, value: str) -> None:
    before = files(project.root)
    refused(demo("focus", "wait", "-g", "demo", "--reason", "ci", "--until", value, "-f", "json"), 2)
    assert files(project.root) == before


def test_longest_wait_from_the_latest_now_stays_readable(demo: Cli, project: Project) -> None:
    late = "2999-12-31T00:00:00Z"
    result = demo(
        "focus", "wait", "-g", "demo", "--reason", "ci", "--for-minutes", str(MAX_MINUTES), now=late
    )
    assert result.exit_code == 0, result.stderr
    assert demo("goal", "show", "-g", "demo", now=late).exit_code == 0


# -- the same refusals through the ops functions (what the MCP tools call) ------------------


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan, 1e300, -1.0, 0.0])
def test_ops_refuse_what_the_cli_refuses(project: Project, value: float) -> None:
    goals.add_goal(project.store, "demo", "Ship", T0)
    goals.register_agent(project.store, "builder", [], T0)
    todos.add_todo(project.store, "demo", "Write parser", T0)
    before = files(project.root)
    calls = [
        lambda: todos.claim_todo(project.store, "demo", "t1", "builder", T0, lease_minutes=value),
        lambda: gates.focus_wait(project.store, "demo", "ci", T0, for_minutes=value),
        lambda: gates.focus_wait(project.store, "demo", "ci", T0, for_minutes=5, poll_every_minutes=value),
        lambda: goals.configure_goal(project.store, "demo", T0, slot_minutes=value),
        lambda: goals.add_goal(project.store, "other", "x", T0, window_hours=value),
    ]
    if value != 0.0:
        calls.append(lambda: spend.spend(project.store, "demo", "builder", T0, minutes=value))
    for call in calls:
        with pytest.raises(UsageError):
            call()
    assert files(project.root) == before


# -- files: an out-of-domain number in a state file is invalid state, file unchanged ---------


@pytest.mark.parametrize(
    ("field", "raw"),
    [
        ("slot_minutes", "null"),
        ("slot_minutes", "1e300"),
        ("slot_minutes", "Infinity"),
        ("window_hours", "NaN"),
        ("window_hours", "1e308"),
        ("min_interval_minutes", "-1"),
        ("compute", "2"),
    ],
)
def test_stored_out_of_domain_number_is_invalid_state(
    demo: Cli, project: Project, field: str, raw: str
) -> None:
    path = project.store.registry_path
    text = path.read_text()
    data = json.loads(text)
    old = json.dumps(data["goals"]["demo"]["quota"][field])
    start = text.index(f'"{field}": {old}')
    path.write_text(text[:start] + f'"{field}": {raw}' + text[start + len(f'"{field}": {old}') :])
    broken = path.read_bytes()
    for args in (
        ["goal", "show", "-g", "demo"],
        ["quota", "status", "-g", "demo"],
        ["todo", "add", "-g", "demo", "--title", "x"],
    ):
        result = demo(*args, "-f", "json")
        refused(result, 4)
        assert field in result.stderr
    packet = demo("quota", "should-run", "-g", "demo", "-a", "builder")
    assert packet.exit_code == 4 and strict_json(packet.stdout)["quota"]["state"] == "blocked_health"
    assert path.read_bytes() == broken


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (lambda s: s["todos"][0].update(priority=10), "priority"),
        (lambda s: s.update(version=2**60), "version"),
        (lambda s: s["todos"][0].update(todo_id="t1\n"), "todo_id"),
        (lambda s: s["todos"][0].update(created_at="9999-12-31T23:59:59-05:00"), "created_at"),
        (
            lambda s: s.update(
                waiting_on={
                    "reason": "x",
                    "until": "2026-12-01T00:00:00Z",
                    "since": "2026-11-29T12:00:00Z",
                    "poll_every_minutes": 1e300,
                }
            ),
            "poll_every_minutes",
        ),
    ],
    ids=["priority", "version", "id-newline", "time", "poll"],
)
def test_stored_state_out_of_domain(demo: Cli, project: Project, change: Any, where: str) -> None:
    path = project.state_file("demo")
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))
    broken = path.read_bytes()
    result = demo("goal", "show", "-g", "demo", "-f", "json")
    refused(result, 4)
    assert where in result.stderr
    assert demo("quota", "should-run", "-g", "demo", "-a", "builder").exit_code == 4
    assert path.read_bytes() == broken


# -- the domain as a property: accepted by the CLI exactly when inside it ---------------------

NUMBERS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=-10, max_value=2e6),
    st.sampled_from([0.0, 0.01, 0.009, 1.0, 87600.0, 87600.1, 1576800.0, 1576800.5]),
)


@given(option=st.sampled_from(QUOTA_OPTIONS), value=NUMBERS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_quota_option_accepted_iff_in_domain(demo: Cli, project: Project, option: str, value: float) -> None:
    kinds = {o: k for names, k, _ in domain.DOMAIN for o in names.split(", ")}
    try:
        check(option, kinds[option], value)
        inside = True
    except UsageError:
        inside = False
    before = files(project.root)
    result = demo("goal", "configure", "-g", "demo", option, repr(value), "-f", "json")
    if inside:
        assert result.exit_code == 0, result.stderr
        strict_json(result.stdout)
        still_healthy(demo)
    else:
        refused(result)
        assert files(project.root) == before


def test_json_output_is_never_infinity() -> None:
    assert dumps({"a": 1.5}) == '{"a":1.5}'
    for bad in (math.inf, -math.inf, math.nan):
        with pytest.raises(LoopxError):
            dumps({"a": bad})


def test_domain_table_is_in_the_cli_reference() -> None:
    from tests.conftest import REPO

    text = (REPO / "docs/cli.md").read_text()
    assert "## Input domain" in text
    for option, kind, _ in domain.DOMAIN:
        assert describe(kind) in text
        for name in option.split(", "):
            assert f"`{name}`" in text
