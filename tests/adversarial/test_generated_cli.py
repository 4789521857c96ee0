"""Class: no traceback, ever: every CLI command, arbitrary arguments, arbitrary state.

The command list is walked from the typer app's own command tree, so a new command joins
automatically. Each command is driven by hypothesis with valid-looking and hostile values
for every option it declares (NaN, inf, 1e300, -1, huge strings, ids with newlines, `..`,
unicode, empty), against a real initialised project (goals, agents, todos, an open turn,
a writeback, spends, a gate, a focus wait, a scheduler ack) of which one state file may be
corrupted (truncated, garbage, a directory in its place, the wrong JSON type, a newer
schema, an out-of-domain number, gone).

Asserted for every case: a documented exit code; no traceback and no `internal error`;
strict JSON on stdout when `--format json` was asked; no absolute temp path in any output;
nothing on stderr that looks like a Python dict, list or tuple repr (`{'`, `['`, `('`);
after any refusal (non-zero exit) every state file byte-identical.

Known failures in files this module's owner does not own are listed in `KNOWN`: each is
kept out of the generated test by its matcher and reproduced exactly by a strict xfail, so
its owner can fix it and delete the entry (the xfail then passes and fails the run).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from loopx_core.cli.app import app
from loopx_core.errors import EXIT_CODES, ExitCode
from tests.cli_tree import (
    ALL_COMMANDS,
    DRIVEN,
    SKIPPED,
    Command,
    Param,
    Template,
    build_template,
    snapshot,
    state_files,
)
from tests.conftest import T0_ISO, run_loopx

EXAMPLES_PER_COMMAND = 20
REAL_PROCESS_CASES = 6
EXIT_CODES = {int(code) for code in EXIT_CODES}
GENERATED: list[str] = []
"""Every case run (command path), counted in the closing summary."""


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Template:
    """The real project every case starts from (copied, never changed)."""
    return build_template(tmp_path_factory.mktemp("generated-cli-template") / "project")


# -- corruptions ----------------------------------------------------------------------------


def _json_change(data: bytes, change: Callable[[Any], Any]) -> bytes:
    lines = data.decode().splitlines()
    if not data.strip().startswith(b"{\n"):  # JSONL (one compact object a line): change the last line
        last = json.loads(lines[-1])
        lines[-1] = json.dumps(change(last))
        return ("\n".join(lines) + "\n").encode()
    return json.dumps(change(json.loads(data))).encode()


def _newer(value: Any) -> Any:
    return {**value, "schema_version": 99} if isinstance(value, dict) else value


def _schema_object(value: Any) -> Any:
    """`schema_version` an object holding a list: what an error must not echo as a Python repr."""
    return {**value, "schema_version": {"v": ["1"]}} if isinstance(value, dict) else value


def _out_of_domain(value: Any) -> Any:
    """The first number found (depth first) becomes 1e308: finite JSON, out of every domain."""
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, int | float) and not isinstance(item, bool) and key != "schema_version":
                return {**value, key: 1e308}
            if isinstance(item, dict | list):
                changed = _out_of_domain(item)
                if changed != item:
                    return {**value, key: changed}
    if isinstance(value, list):
        for index, item in enumerate(value):
            changed = _out_of_domain(item)
            if changed != item:
                return [*value[:index], changed, *value[index + 1 :]]
    return value


CORRUPTIONS: dict[str, Callable[[bytes], bytes | None]] = {
    "truncated": lambda data: data[: len(data) // 2],
    "empty": lambda data: b"",
    "garbage": lambda data: b"\x00\xff<html>garbage</html>\n",
    "wrong_type_list": lambda data: b"[]\n",
    "wrong_type_number": lambda data: b"7\n",
    "wrong_type_null": lambda data: b"null\n",
    "garbage_line": lambda data: data + b"{not json}\n",
    "newer_schema": lambda data: _json_change(data, _newer),
    "schema_object": lambda data: _json_change(data, _schema_object),
    "out_of_domain": lambda data: _json_change(data, _out_of_domain),
    "directory": lambda data: None,
    "missing": lambda data: None,
}


def corrupt(root: Path, relative: str, how: str) -> None:
    """Apply corruption `how` to `.loopx/<relative>`."""
    path = root / ".loopx" / relative
    data = path.read_bytes()
    if how == "missing":
        path.unlink()
        return
    if how == "directory":
        path.unlink()
        (path / "inner").mkdir(parents=True)
        return
    try:
        new = CORRUPTIONS[how](data)
    except (ValueError, IndexError):
        new = b"\x00"
    path.write_bytes(new or b"")


# -- argument values ----------------------------------------------------------------------

HOSTILE_TEXT = [
    "",
    " ",
    "x" * 20000,
    "ünï\u202ecode",
    "line\nbreak",
    "\x1b[31mred",
    "-f",
    "--goal-id",
    "../../etc/passwd",
]
HOSTILE_IDS = [
    "demo\n",
    "t1\n",
    "..",
    "../demo",
    "a/b",
    "UPPER",
    "Ünï",
    "",
    " ",
    "x" * 65,
    "a" * 100000,
    "-g",
]
HOSTILE_NUMBERS = ["nan", "inf", "-inf", "1e300", "-1e300", "1e999", "-1", "0", "abc", "", "9" * 400]
KNOWN_IDS = {
    "--goal-id": ["demo", "other", "ghost"],
    "--agent-id": ["builder", "reviewer", "helper", "free", "free", "ghost"],
    "--todo-id": ["t1", "t2", "t3", "t4", "t4", "t9"],
    "--gate-id": ["gate-1", "gate-2"],
    "--event-id": ["ev-1", "ev-2", "ev-3", "ev-9"],
    "--bound-agent": ["builder", "reviewer"],
    "--blocks-agent": ["builder", "reviewer"],
    "--exclude-agent": ["builder", "reviewer"],
    "--fingerprint": ["fp-1", "abc123"],
    "--turn-instance-id": ["inst-1", "lease-1"],
}
CHOICES = {
    "--kind": ["agent", "user", "robot"],
    "--status": ["open", "claimed", "done", "blocked", "deferred", "bogus"],
    "--validation-status": ["passed", "failed", "maybe"],
    "--surface": ["codex-app", "claude-code", "dsh", "nope"],
    "--scope": ["project", "user", "galaxy"],
    "--rrule": ["FREQ=MINUTELY;INTERVAL=5", "FREQ=HOURLY", "FREQ=" + "x" * 500, "daily"],
    "--until": [
        "2026-11-29T13:00:00Z",
        "2026-11-29T11:00:00Z",
        "9999-12-31T23:59:59-05:00",
        "0001-01-01T00:00:00+01:00",
        "2026-11-29T13:00:00",
        "tomorrow",
    ],
    "--validation-command": ["true", "false", "exit 3"],
    "--loopx-command": ["loopx", "/usr/bin/env loopx", ""],
    "--changed-file": ["src/parser.py", "/etc/passwd", "../../outside", ""],
    "--dir": ["plugins-out", "plugins-out/sub", "."],
}
NUMBER_CHOICES = {
    "--compute": ["0", "0.5", "1", "1.5"],
    "--window-hours": ["1", "24", "87600", "87601"],
    "--slot-minutes": ["0.01", "1", "60", "0.001"],
    "--min-interval-minutes": ["0", "30", "1576800"],
    "--lease-minutes": ["1", "30", "600"],
    "--for-minutes": ["1", "60", "1576800"],
    "--poll-every-minutes": ["1", "15"],
    "--minutes": ["0", "3.5", "90"],
    "--slots": ["1", "2", "1000000000", "1000000001"],
    "--priority": ["0", "2", "9", "10"],
}
ARGUMENT_CHOICES = {
    "hook": ["claude-stop", "claude-session-start", "dsh-turn-end", "nope"],
    "hosts scaffold": ["acme-ide", "Bad Name", "../x"],
}
HOOK_STDIN = ["", "{}", '{"session_id": "s1", "stop_hook_active": false}', "[]", "not json", '{"a": ' * 3000]


def value_for(command: Command, param: Param, template: Template) -> st.SearchStrategy[str]:
    """Valid-looking and hostile values for one parameter."""
    name = param.name
    if param.kind == "format":
        return st.sampled_from(["json", "json", "markdown", "xml"])
    if param.kind == "argument":
        return st.sampled_from(ARGUMENT_CHOICES.get(command.name, ["x"]) + HOSTILE_IDS[:6])
    if name == "--turn-key":
        fake = "sha256:" + "0" * 64
        return st.sampled_from(
            [*template.turn_keys, *template.turn_keys, fake, template.turn_keys[0] + "\n", "sha256:xyz", ""]
        )
    if name in KNOWN_IDS:
        return st.one_of(
            st.sampled_from(KNOWN_IDS[name]), st.sampled_from(KNOWN_IDS[name]), st.sampled_from(HOSTILE_IDS)
        )
    if name in CHOICES and name in ("--validation-command", "--dir"):
        return st.sampled_from(CHOICES[name])  # executed or written: never arbitrary
    if name in CHOICES:
        return st.one_of(st.sampled_from(CHOICES[name]), st.sampled_from(HOSTILE_TEXT))
    if param.kind in ("float", "int"):
        good = NUMBER_CHOICES.get(name, ["1", "2"])
        return st.one_of(st.sampled_from(good), st.sampled_from(HOSTILE_NUMBERS), st.floats().map(repr))
    if param.kind == "path":
        return st.sampled_from(["plugins-out"])
    return st.one_of(
        st.sampled_from(["ok", "Write the parser", "python"]),
        st.sampled_from(HOSTILE_TEXT),
        st.text(max_size=30),
    )


@dataclass(frozen=True)
class Case:
    """One generated invocation: state, arguments, environment, stdin."""

    command: str
    args: tuple[str, ...]
    corruption: tuple[str, str] | None
    now: str
    stdin: str | None

    def describe(self) -> str:
        """A reproduction: the state change and the command line."""
        shown = " ".join(repr(a) if (not a or any(c in a for c in " \n\t")) else a[:80] for a in self.args)
        state = f"corrupt {self.corruption[0]} ({self.corruption[1]})" if self.corruption else "intact state"
        return f"[{state}; LOOPX_NOW={self.now!r}] loopx {shown}"


@st.composite
def cases(draw: st.DrawFn, command: Command, template: Template, files: list[str]) -> Case:
    """A case for `command`: its options drawn one by one, maybe a corrupt file."""
    args: list[str] = list(command.path)
    # most cases name one coherent selection (a goal, an agent, its todo and turn) so they
    # get past the id checks into the commands' real work; the rest mix ids freely
    coherent = dict(draw(st.sampled_from(template.selections))) if draw(st.integers(0, 9)) < 7 else {}
    for param in command.params:
        if param.kind == "flag":
            if draw(st.integers(0, 9)) < 2:
                args.append(param.name)
            continue
        likely = param.required or param.name in coherent
        present = draw(st.integers(0, 9)) < (9 if likely else 4)
        if not present:
            continue
        count = draw(st.integers(1, 3)) if param.multiple else 1
        for _ in range(count):
            value = coherent.get(param.name) if count == 1 else None
            if value is None:
                value = draw(value_for(command, param, template))
            if param.kind == "argument":
                args.append(value)
            else:
                args += [param.name, value]
    corruption = None
    if files and draw(st.integers(0, 9)) < 4:
        corruption = (draw(st.sampled_from(files)), draw(st.sampled_from(sorted(CORRUPTIONS))))
    now = T0_ISO
    if draw(st.integers(0, 9)) < 3:
        now = draw(
            st.sampled_from(
                ["2026-11-30T12:00:00Z", "2027-06-01T00:00:00Z", "garbage", "9999-12-31T23:59:59Z"]
            )
        )
    stdin = draw(st.sampled_from(HOOK_STDIN)) if command.path[0] == "hook" else None
    return Case(command.name, tuple(args), corruption, now, stdin)


# -- running and checking a case ------------------------------------------------------------


@dataclass
class Outcome:
    """What one case did."""

    exit_code: int
    stdout: str
    stderr: str
    before: dict[str, bytes | str]
    after: dict[str, bytes | str]


def asked_json(case: Case) -> bool:
    """True when the case's last `--format` value is `json`."""
    words = list(case.args)
    values = [words[i + 1] for i, w in enumerate(words[:-1]) if w in ("--format", "-f")]
    return bool(values) and values[-1] == "json"


def run_case(case: Case, template: Template, *, real_process: bool = False) -> Outcome:
    """Copy the template, corrupt it, run the case in-process (or as a real process)."""
    workdir = Path(tempfile.mkdtemp(dir=template.root.parent, prefix="case-"))
    try:
        root = workdir / "project"
        shutil.copytree(template.root, root)
        if case.corruption:
            corrupt(root, *case.corruption)
        before = snapshot(root)
        cwd = Path.cwd()
        os.chdir(workdir)  # anything a command writes outside the project lands in this case's folder
        try:
            if real_process:
                result = run_loopx(*case.args, root=root, now=case.now, timeout=60)
                code, out, err = result.exit_code, result.stdout, result.stderr
            else:
                invoked = CliRunner().invoke(
                    app,
                    ["--root", str(root), *case.args],
                    input=case.stdin,
                    env={"LOOPX_NOW": case.now},
                    catch_exceptions=True,
                )
                code, out, err = invoked.exit_code, invoked.stdout, invoked.stderr
                if invoked.exception is not None and not isinstance(invoked.exception, SystemExit):
                    err += f"\nTraceback (escaped): {type(invoked.exception).__name__}: {invoked.exception}"
        finally:
            os.chdir(cwd)
        return Outcome(code, out, err, before, snapshot(root))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


PYTHON_REPR = re.compile(r"[{\[(]'[^'\n]*'[:,\])}]")
"""What a dict, list or tuple of strings looks like when Python prints it: `{'a': ...}`,
`['x', ...]`, `('x',)`; an error meant for people never shows one (JSON, `["x"]`, may)."""


def python_repr(text: str) -> str | None:
    """The first thing in `text` that looks like a Python dict, list or tuple repr, if any."""
    found = PYTHON_REPR.search(text)
    return found.group(0) if found else None


def problems(case: Case, outcome: Outcome, temp_root: str) -> list[str]:
    """Every promise the outcome breaks (empty: the case holds)."""
    found: list[str] = []
    text = outcome.stdout + outcome.stderr
    if outcome.exit_code not in EXIT_CODES:
        found.append(f"undocumented exit code {outcome.exit_code}")
    if "Traceback" in text:
        found.append("traceback: " + outcome.stderr.strip().splitlines()[-1][:300])
    if "internal error" in outcome.stderr:
        found.append("internal error: " + outcome.stderr.strip()[:300])
    if asked_json(case) and not case.command.startswith("hook"):
        try:
            json.loads(outcome.stdout, parse_constant=lambda token: (_ for _ in ()).throw(ValueError(token)))
        except ValueError as bad:
            found.append(f"--format json but stdout is not JSON ({bad}): {outcome.stdout[:200]!r}")
    if temp_root in text:
        found.append("absolute path in output")
    repr_seen = python_repr(outcome.stderr)
    if repr_seen:
        found.append(f"a Python repr on stderr ({repr_seen!r}): {outcome.stderr[:300]!r}")
    if outcome.exit_code != 0 and outcome.stderr.count("\n") > 1:
        found.append(f"refusal is not one line on stderr: {outcome.stderr[:300]!r}")
    if outcome.exit_code != 0 and outcome.before != outcome.after:
        changed = sorted(
            k
            for k in set(outcome.before) | set(outcome.after)
            if outcome.before.get(k) != outcome.after.get(k)
        )
        found.append(f"refusal (exit {outcome.exit_code}) changed state files: {changed}")
    return found


# -- known failures outside this module's owner's files ----------------------------------------


@dataclass(frozen=True)
class Known:
    """A known failure: who owns the fix, which generated cases it explains, an exact reproduction."""

    owner: str
    matches: Callable[[Case], bool]
    reproduction: Case


def _has(case: Case, option: str, values: tuple[str, ...] | None = None) -> bool:
    words = list(case.args)
    return any(w == option and (values is None or words[i + 1] in values) for i, w in enumerate(words[:-1]))


def _value(case: Case, option: str) -> str | None:
    words = list(case.args)
    return next((words[i + 1] for i, w in enumerate(words[:-1]) if w == option), None)


def _outside(domain: Any, text: str | None) -> bool:
    """True when `text` parses as a number (so the option parser lets it through) outside `domain`."""
    from loopx_core.errors import UsageError
    from loopx_core.models.domain import check

    try:
        number = float(text or "")
    except ValueError:
        return False
    try:
        check("value", domain, number)
    except UsageError:
        return True
    return False


def _repro(*args: str) -> Case:
    command = (
        " ".join(args[:2]) if args[0] in {c.path[0] for c in ALL_COMMANDS if len(c.path) > 1} else args[0]
    )
    return Case(command, args, None, T0_ISO, None)


TURN_KEY_1 = "sha256:" + "1" * 64
"""Stands for the template's first turn key (builder's, past writeback and spend) in a reproduction."""
TURN_KEY_2 = "sha256:" + "2" * 64
"""Stands for the template's second turn key (helper's open turn) in a reproduction."""


KNOWN: dict[str, Known] = {}
"""Named known failures outside this module's owner's files: empty it as owners fix them."""


def reproduction(name: str, template: Template) -> Case:
    """A known failure's reproduction with the template's real turn keys filled in."""
    known = KNOWN[name]
    keys = {TURN_KEY_1: template.turn_keys[0], TURN_KEY_2: template.turn_keys[1]}
    args = tuple(
        next((a.replace(k, v) for k, v in keys.items() if a.startswith(k)), a)
        for a in known.reproduction.args
    )
    return Case(
        known.reproduction.command, args, known.reproduction.corruption, T0_ISO, known.reproduction.stdin
    )


def known_failure(case: Case) -> str | None:
    """The name of the known failure that explains `case`, if any."""
    return next((name for name, known in KNOWN.items() if known.matches(case)), None)


# -- the tests ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "validate"),
    [("true", "false"), ("true", "exit 3"), ("exit 7", "true"), ("echo 'x' >&2; exit 1", "true")],
)
def test_run_once_refusals_are_words_not_reprs(
    template: Template, tmp_path_factory: pytest.TempPathFactory, host: str, validate: str
) -> None:
    """`turn run-once` (not generated: it runs shell commands) refused by its host or validation
    command: one line on stderr, exit 14, no Python repr (its journal stays, for --resume)."""
    args = ("turn", "run-once", "-g", "demo", "-a", "free", "--host-command", host)
    case = Case("turn run-once", (*args, "--validation-command", validate), None, T0_ISO, None)
    outcome = run_case(case, template)
    assert outcome.exit_code == int(ExitCode.WRITEBACK_REJECTED), outcome.stderr
    assert outcome.stderr.startswith("loopx: error: writeback_rejected: ")
    assert outcome.stderr.count("\n") == 1 and python_repr(outcome.stderr) is None, outcome.stderr
    assert str(tmp_path_factory.getbasetemp()) not in outcome.stdout + outcome.stderr


def test_known_failures_are_named_owned_and_matched(template: Template) -> None:
    for name, known in KNOWN.items():
        case = reproduction(name, template)
        assert known.owner and case.command in {c.name for c in ALL_COMMANDS}, name
        assert known.matches(case), f"{name}: the matcher must cover its own reproduction"
        assert known_failure(case) == name


_WORD = st.text(st.characters(blacklist_characters="'\"\\\n", blacklist_categories=("Cs", "Cc")), max_size=8)


@given(
    value=st.one_of(
        st.dictionaries(_WORD, st.one_of(_WORD, st.integers(), st.none()), min_size=1),
        st.lists(_WORD, min_size=1),
        st.tuples(_WORD),
        st.tuples(_WORD, _WORD),
    ),
    before=st.sampled_from(["", "loopx: error: ", "validation failed ("]),
)
def test_a_python_repr_of_text_is_recognised(value: object, before: str) -> None:
    """The stderr check finds any dict, list or tuple of text printed by Python."""
    assert python_repr(f"{before}{value}; nothing was written\n")


@pytest.mark.parametrize(
    "line",
    [
        "loopx: error: goal 'nope' not found (see `loopx goal list`)",
        "loopx: error: unknown --surface 'claud-code' (did you mean claude-code?); known: claude-code, dsh",
        'loopx: error: front matter tools is ["Bash"], expected "Read"',
        "loopx: error: invalid --until 'tomorrow': use ISO-8601, e.g. 2026-11-29T12:00:00Z",
        "loopx: error: writeback_rejected: validation failed (`false` exited 1); nothing was written back",
    ],
)
def test_a_message_for_people_is_not_taken_for_a_repr(line: str) -> None:
    assert python_repr(line) is None


def test_every_command_is_driven_or_skipped_with_a_reason() -> None:
    names = {c.name for c in ALL_COMMANDS}
    assert {"goal add", "quota should-run", "writeback", "turn begin"} <= names
    for command in ALL_COMMANDS:
        assert command in DRIVEN or any(command.name.startswith(s) for s in SKIPPED), command.name
    assert len(DRIVEN) >= 25


@pytest.mark.parametrize("command", DRIVEN, ids=lambda c: c.name)
def test_generated_cases_hold(
    command: Command, template: Template, tmp_path_factory: pytest.TempPathFactory
) -> None:
    temp_root = str(tmp_path_factory.getbasetemp())
    files = state_files(template.root)
    failures: list[str] = []

    @given(case=cases(command, template, files))
    @settings(
        max_examples=EXAMPLES_PER_COMMAND,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )
    def check(case: Case) -> None:
        GENERATED.append(case.command)
        if known_failure(case):
            return
        found = problems(case, run_case(case, template), temp_root)
        if found:
            failures.append(f"{case.describe()}\n    " + "\n    ".join(found))
        assert not found, failures[-1]

    check()


def test_real_process_cases_hold(template: Template, tmp_path_factory: pytest.TempPathFactory) -> None:
    """A few cases through the real console script (the fast should-run path included)."""
    temp_root = str(tmp_path_factory.getbasetemp())
    files = state_files(template.root)
    chosen = [
        c
        for c in DRIVEN
        if c.name in ("quota should-run", "status", "todo claim", "goal add", "focus wait", "quota spend")
    ]

    @given(data=st.data())
    @settings(
        max_examples=REAL_PROCESS_CASES, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    def check(data: st.DataObject) -> None:
        command = data.draw(st.sampled_from(chosen))
        case = data.draw(cases(command, template, files))
        GENERATED.append(case.command)
        if known_failure(case) or case.stdin:
            return
        found = problems(case, run_case(case, template, real_process=True), temp_root)
        assert not found, f"{case.describe()}\n    " + "\n    ".join(found)

    check()


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=KNOWN[name].owner))
        for name in sorted(KNOWN)
    ],
)
def test_known_failure_still_fails(
    name: str, template: Template, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Each known failure, reproduced exactly: strict xfail, so a fix turns it red until removed."""
    case = reproduction(name, template)
    found = problems(case, run_case(case, template), str(tmp_path_factory.getbasetemp()))
    assert not found, f"{name} ({KNOWN[name].owner}): {case.describe()}\n    " + "\n    ".join(found)


def test_zz_summary(capsys: pytest.CaptureFixture[str]) -> None:
    """How many generated cases ran (printed past pytest's capture)."""
    by_command: dict[str, int] = {}
    for name in GENERATED:
        by_command[name] = by_command.get(name, 0) + 1
    with capsys.disabled():
        print(
            f"\n[generated CLI] {len(GENERATED)} generated cases over {len(by_command)} commands; skipped: {', '.join(sorted(SKIPPED))}"
        )
    assert GENERATED or os.environ.get("PYTEST_XDIST_WORKER")
