"""The lean entry of the settlement commands hosts run every turn: one table row a command.

`turn begin`, `writeback` / `turn writeback`, `quota spend` / `turn spend`, `turn closeout` and
`todo complete` are parsed here by hand from the table below and answered by their runner in
cli/settle.py, the same function typer's command calls, so typer (and the rest of the app)
is never imported for them. Anything the parser is not sure of goes back to typer, which
gives the same answer or its usage error: help, an unknown, repeated or combined option, a
plain word, a value that looks like an option, a flag given a value, a missing required
option, a number or format typer would read otherwise, shell completion.
tests/test_hot_path_settle.py checks every row against typer's command (spellings, kinds,
required options, defaults) and compares both entries' output on generated command lines.
"""

from __future__ import annotations

import os

from loopx_core.frozen_re import compile as _compile
from loopx_core.models.record import Record

VALUE, MANY, FLAG, INT, FLOAT, FORMAT = "value", "many", "flag", "int", "float", "format"
"""Option kinds: one string, a repeatable string, a bare flag, an integer, a number, `--format`."""
_INT = _compile(r"[0-9]{1,18}")
_FLOAT = _compile(r"[0-9]{1,18}(\.[0-9]{1,18})?")
_FORMATS = ("auto", "human", "json", "markdown")
_COMPLETE_VAR = "_LOOPX_COMPLETE"
"""Set when a shell asks typer for completions: typer answers those."""


class Command(Record):
    """A lean command: its words after `loopx`, its runner in cli/settle.py, its options."""

    path: tuple[str, ...]
    runner: str
    required: tuple[str, ...]
    """The runner's positional parameters after `root`: options typer requires."""
    options: dict[str, tuple[str, str]]
    """Each spelling (`--goal-id`, `-g`) -> (the runner's parameter, its kind)."""


def _table(*rows: tuple[str, str, tuple[str, ...]]) -> dict[str, tuple[str, str]]:
    return {spelling: (param, kind) for param, kind, spellings in rows for spelling in spellings}


_GOAL = ("goal_id", VALUE, ("--goal-id", "-g"))
_AGENT = ("agent_id", VALUE, ("--agent-id", "-a"))
_TURN_KEY = ("turn_key", VALUE, ("--turn-key", "-k"))
_TODO = ("todo_id", VALUE, ("--todo-id", "-t"))
_EVIDENCE = ("evidence", MANY, ("--evidence", "-e"))
_SLOTS = ("slots", INT, ("--slots",))
_NO_FOLLOW_UP = ("no_follow_up", FLAG, ("--no-follow-up",))
_FMT = ("fmt", FORMAT, ("--format", "-f"))
_WRITEBACK = _table(
    _GOAL,
    _AGENT,
    _TURN_KEY,
    ("summary", VALUE, ("--summary", "-s")),
    _EVIDENCE,
    ("validation_status", VALUE, ("--validation-status",)),
    ("validation_command", VALUE, ("--validation-command",)),
    ("changed_file", MANY, ("--changed-file",)),
    _TODO,
    _NO_FOLLOW_UP,
    ("no_progress", VALUE, ("--no-progress",)),
    _FMT,
)
COMMANDS = (
    Command(
        ("turn", "begin"),
        "run_begin",
        ("goal_id", "agent_id"),
        _table(
            _GOAL,
            _AGENT,
            _TODO,
            ("replan", FLAG, ("--replan",)),
            ("turn_instance_id", VALUE, ("--turn-instance-id",)),
            ("lease_minutes", FLOAT, ("--lease-minutes",)),
            _FMT,
        ),
    ),
    Command(("writeback",), "run_writeback", ("goal_id", "agent_id", "turn_key", "summary"), _WRITEBACK),
    Command(
        ("turn", "writeback"), "run_writeback", ("goal_id", "agent_id", "turn_key", "summary"), _WRITEBACK
    ),
    Command(
        ("turn", "spend"),
        "run_turn_spend",
        ("goal_id", "agent_id", "turn_key"),
        _table(_GOAL, _AGENT, _TURN_KEY, _TODO, _SLOTS, _FMT),
    ),
    Command(
        ("turn", "closeout"),
        "run_closeout",
        ("goal_id", "agent_id", "turn_key"),
        _table(_GOAL, _AGENT, _TURN_KEY, _TODO, _EVIDENCE, _FMT),
    ),
    Command(
        ("quota", "spend"),
        "run_quota_spend",
        ("goal_id", "agent_id"),
        _table(
            _GOAL,
            _AGENT,
            _TURN_KEY,
            _TODO,
            _SLOTS,
            ("manual", FLAG, ("--manual",)),
            ("minutes", FLOAT, ("--minutes",)),
            ("turn_instance_id", VALUE, ("--turn-instance-id",)),
            _FMT,
        ),
    ),
    Command(
        ("todo", "complete"),
        "run_complete",
        ("goal_id", "todo_id"),
        _table(_GOAL, _AGENT, _TODO, _EVIDENCE, _NO_FOLLOW_UP, _TURN_KEY, _FMT),
    ),
)
"""Every lean settlement command; a new one is a row here and a runner in cli/settle.py."""


class Parsed(Record):
    """A command line the lean entry answers: the command, `--root` and the options' values."""

    command: Command
    root: str | None
    values: dict[str, object]


def _convert(kind: str, value: str) -> object | None:
    """`value` as typer reads an option of `kind`, or None where typer might read it otherwise."""
    if kind == INT:
        return int(value) if _INT.fullmatch(value) else None
    if kind == FLOAT:
        return float(value) if _FLOAT.fullmatch(value) else None
    if kind == FORMAT:  # as a plain str, which cli.output takes as it takes a `Format`
        return value if value in _FORMATS else None
    return value


def parse(argv: list[str]) -> Parsed | None:
    """Read `[--root R] COMMAND OPTIONS` as typer would, or None to leave it to typer."""
    args = list(argv)
    root = os.environ.get("LOOPX_ROOT") or None
    if args[:1] == ["--root"]:
        if len(args) < 2 or args[1].startswith("-"):
            return None
        root, args = args[1], args[2:]
    command = next((c for c in COMMANDS if tuple(args[: len(c.path)]) == c.path), None)
    if command is None:
        return None
    words = args[len(command.path) :]
    values: dict[str, object] = {}
    index = 0
    while index < len(words):
        word = words[index]
        name, equals, inline = word.partition("=") if word.startswith("--") else (word, "", "")
        spec = command.options.get(name)
        if spec is None:
            return None  # a plain word, an unknown option, help, `--`, `-gG`: typer's to answer
        param, kind = spec
        if kind == FLAG:
            if equals or param in values:
                return None  # a flag given a value, or given twice
            values[param] = True
            index += 1
            continue
        if equals:
            raw, index = inline, index + 1
        elif index + 1 < len(words) and not words[index + 1].startswith("-"):
            raw, index = words[index + 1], index + 2
        else:
            return None  # no value, or one typer may read as an option
        value = _convert(kind, raw)
        if value is None:
            return None
        if kind == MANY:
            values.setdefault(param, []).append(value)  # type: ignore[attr-defined]
        elif param in values:
            return None  # a single option given twice
        else:
            values[param] = value
    if any(param not in values for param in command.required):
        return None
    return Parsed(command, root, values)


def dispatch(argv: list[str], *, process: bool = False) -> None:
    """Answer `argv` here and exit when it is a settlement command line `parse` reads; else return.

    `process` (the console script's own call): the cyclic collector stops for good, as for the
    tick commands (cli/entry.py `_hot`): a writeback's 50-odd passes over its models and packet
    (6-10 ms) free no cycle. The `SystemExit` it ends in is the caller's: the console script
    leaves without the interpreter's teardown when no exit handler is registered (`_leave`).
    """
    if os.environ.get(_COMPLETE_VAR):
        return
    parsed = parse(argv)
    if parsed is None:
        return
    import sys

    if process:
        import gc

        gc.disable()

    from loopx_core.store.choice import begin_early, forget_begun

    begin_early(parsed.root)  # a team store's server prepares the session while the rest imports
    from loopx_core.cli import settle
    from loopx_core.cli.output import report_internal, requested_format

    values = dict(parsed.values)
    positional = [values.pop(param) for param in parsed.command.required]
    runner = getattr(settle, parsed.command.runner)
    code: object = 0
    try:
        runner(parsed.root, *positional, **values)
    except SystemExit as refused:  # a refusal: its line is on stderr
        code = refused.code
    except (EOFError, KeyboardInterrupt):  # as typer's group: click's blank line, then one line
        sys.stderr.write("\nloopx: aborted\n")
        raise SystemExit(1) from None
    except Exception as error:  # as typer's group: one internal-error line, never a traceback
        code = report_internal(error, requested_format(list(argv), None))
    finally:
        forget_begun()  # a connection no store took (the command refused first) ends here
    raise SystemExit(code)  # a closed pipe or a full disk: the guarded stdout (cli/pipe.py) says so at exit
