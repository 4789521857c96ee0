"""The `loopx` console script.

The commands hosts run on every heartbeat tick or stop (`loopx quota should-run`, `loopx hook
NAME`, `loopx heartbeat-prompt`) take a fast path that parses their few options by hand and
never imports typer.
Anything the fast parser does not fully understand (help, unknown or repeated options, a
value that looks like an option, other commands) goes to typer, which gives the same result
or the proper usage error (tests/test_hot_path.py and tests/test_claude_hooks.py compare both).
"""

from __future__ import annotations

import os
import sys

from loopx_core.cli.pipe import READER_GONE as READER_GONE  # where callers have always named it
from loopx_core.cli.pipe import Output, guard_stdout

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import NoReturn

_SHOULD_RUN_OPTIONS = {
    "--goal-id": "goal_id",
    "-g": "goal_id",
    "--agent-id": "agent_id",
    "-a": "agent_id",
    "--available-capability": "capability",
    "-c": "capability",
    "--surface": "surface",
    "--current-rrule": "current_rrule",
    "--format": "format",
    "-f": "format",
}
_HOOK_OPTIONS = {"--goal-id": "goal_id", "-g": "goal_id", "--agent-id": "agent_id", "-a": "agent_id"}
_HEARTBEAT_OPTIONS = {**_HOOK_OPTIONS, "--surface": "surface", "--loopx-command": "loopx_command"}
_REPEATABLE = frozenset({"capability"})


def _root(args: list[str]) -> tuple[str | None, list[str]]:
    """A leading `--root R` (else `LOOPX_ROOT`, as typer reads it) and the words after it."""
    if len(args) >= 2 and args[0] == "--root":
        return args[1], args[2:]
    return os.environ.get("LOOPX_ROOT") or None, args


def _options(
    words: list[str], table: dict[str, str], *, positionals: int = 0
) -> tuple[dict[str, object], list[str]] | None:
    """`words` as options of `table` and exactly `positionals` plain words, or None to defer."""
    found: dict[str, object] = {"capability": []}
    plain: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        if not word.startswith("-") and word:
            plain.append(word)
            index += 1
            continue
        name, equals, inline = word.partition("=") if word.startswith("--") else (word, "", "")
        key = table.get(name)
        if key is None:
            return None
        if equals:
            value = inline
            index += 1
        else:
            if index + 1 >= len(words) or words[index + 1].startswith("-"):
                return None  # no value, or one typer may read otherwise
            value = words[index + 1]
            index += 2
        if key in _REPEATABLE:
            found[key].append(value)  # type: ignore[attr-defined]
        elif key in found:
            return None  # repeated single option: let typer decide
        else:
            found[key] = value
    return (found, plain) if len(plain) == positionals else None


def parse_fast(argv: list[str]) -> dict[str, object] | None:
    """Parse `[--root R] quota should-run OPTIONS`, or None to defer to typer."""
    root, args = _root(list(argv))
    if args[:2] != ["quota", "should-run"]:
        return None
    parsed = _options(args[2:], _SHOULD_RUN_OPTIONS)
    if parsed is None:
        return None
    found = {**parsed[0], "root": root}
    if "goal_id" not in found or "agent_id" not in found:
        return None
    if found.get("format", "auto") not in ("auto", "human", "json", "markdown"):
        return None  # typer refuses it, with its did-you-mean
    return found


def parse_hook(argv: list[str]) -> dict[str, str | None] | None:
    """Parse `[--root R] hook NAME [-g G] [-a A]`, or None to defer to typer."""
    root, args = _root(list(argv))
    if args[:1] != ["hook"]:
        return None
    parsed = _options(args[1:], _HOOK_OPTIONS, positionals=1)
    if parsed is None:
        return None
    found, (name,) = parsed
    return {
        "name": name,
        "goal_id": found.get("goal_id"),  # type: ignore[dict-item]
        "agent_id": found.get("agent_id"),  # type: ignore[dict-item]
        "root": root,
    }


def parse_heartbeat(argv: list[str]) -> dict[str, str | None] | None:
    """Parse `[--root R] heartbeat-prompt -g G -a A [--surface S] [--loopx-command L]`, or None to defer."""
    root, args = _root(list(argv))
    if args[:1] != ["heartbeat-prompt"] or (root or "").startswith("-"):
        return None  # a root that looks like an option: typer's reading of it decides
    parsed = _options(args[1:], _HEARTBEAT_OPTIONS)
    if parsed is None or "goal_id" not in parsed[0] or "agent_id" not in parsed[0]:
        return None
    found = parsed[0]
    return {
        "goal_id": found["goal_id"],  # type: ignore[dict-item]
        "agent_id": found["agent_id"],  # type: ignore[dict-item]
        "surface": found.get("surface"),  # type: ignore[dict-item]
        "loopx_command": found.get("loopx_command", "loopx"),  # type: ignore[dict-item]
        "root": root,
    }


def main(argv: list[str] | None = None) -> None:
    """Run `loopx` with `argv`; by default the process arguments, as the process itself: its
    stdout guarded (cli/pipe.py: output that cannot be written is one line and exit 1, never a
    traceback), the hot commands lean at both ends (`_hot`)."""
    if argv is not None:
        _main(argv, None)
        return
    output = guard_stdout()
    try:
        _main(sys.argv[1:], output)
    except SystemExit as done:
        raise SystemExit(output.finish(done.code)) from None
    raise SystemExit(output.finish(0))


def _main(args: list[str], output: Output | None) -> None:
    """Dispatch `args`: a hot command by hand, a settlement command by its table, else typer."""
    if not all(map(str.isascii, args)) or not (os.environ.get("LOOPX_ROOT") or "").isascii():
        _refuse_undecodable(args)  # returns when every word is UTF-8 after all
    lean = not os.environ.get("LOOPX_NO_FAST_PATH")
    fast = parse_fast(args) if lean else None
    if fast is not None:
        _hot(output, _should_run, fast)
    hook = parse_hook(args) if lean else None
    if hook is not None:
        _hot(output, _hook, hook)
    prompt = parse_heartbeat(args) if lean else None
    if prompt is not None:
        from loopx_core.cli.hook_cmds import run_heartbeat_prompt

        values = (prompt["goal_id"], prompt["agent_id"], prompt["surface"], prompt["loopx_command"])
        _hot(output, _exit, run_heartbeat_prompt, *values)
    if lean:  # the settlement commands of a turn (cli/lean_settle.py); returns when typer answers
        from loopx_core.cli.lean_settle import dispatch

        if output is None:
            dispatch(args)
        try:
            dispatch(args, process=True)
        except SystemExit as done:  # answered: as a hot command, leave once the output is flushed
            _leave(output.finish(done.code))
    try:
        from loopx_core.cli.app import app
    except Exception as error:  # a broken environment (say, metadata pydantic's plugin loader refuses)
        from loopx_core.cli.output import report_internal, requested_format

        raise SystemExit(report_internal(error, requested_format(args, None))) from None
    app(args=args, prog_name="loopx")


def _undecodable(word: str) -> bool:
    """Whether `word` came from bytes that are not UTF-8 (Python decodes those to lone surrogates)."""
    try:
        word.encode()
    except UnicodeEncodeError:
        return True
    return False


def _escaped(word: str) -> str:
    """`word` as one error line may show it: each byte that was not UTF-8 as `\\xff`, control
    characters as their escapes, and an absolute path (a root, a file) only as its bad bytes."""
    from loopx_core.escapes import visible

    bad = [ord(c) - 0xDC00 if 0xDC80 <= ord(c) <= 0xDCFF else None for c in word]
    if word.startswith("/"):  # no absolute path in any message
        shown = "".join(f"\\x{code:02x}" for code in bad if code is not None)
        return f"a path with the bytes {shown}"
    text = "".join(c if code is None else f"\\x{code:02x}" for c, code in zip(word, bad, strict=True))
    return f"'{visible(text)}'"


def _refuse_undecodable(args: list[str]) -> None:
    """Refuse, as a usage error and before anything runs, an argument word (or `LOOPX_ROOT`)
    that is not UTF-8: no command can store, compare or print it. Returns if there is none."""
    root = os.environ.get("LOOPX_ROOT") or ""
    where, word = "", ""
    if _undecodable(root):
        where, word = "LOOPX_ROOT", root
    for index, arg in enumerate(args):
        if where:
            break
        if not _undecodable(arg):
            continue
        word, option = arg, ""
        if arg.startswith("--") and "=" in arg:
            option, _, word = arg.partition("=")
        elif index and args[index - 1].startswith("-") and not arg.startswith("-"):
            option = args[index - 1]
        if _undecodable(option):
            option, word = "", arg  # the option's own name is not UTF-8: show the whole word
        where = f"argument {index + 1}" + (f" (the value of {option})" if option else "")
    if not where:
        return
    from loopx_core.cli.output import report_usage, requested_format

    words = args[2:] if args[:1] == ["--root"] else args
    hook = words[:1] == ["hook"]
    fmt = None if hook else requested_format(args, "auto")
    message = f"{where} is not UTF-8 text: {_escaped(word)}"
    report_usage(message, fmt, prefix="loopx: hook: " if hook else "loopx: error: ")
    raise SystemExit(1 if hook else 2)  # a hook's usage errors exit 1: hosts read 2 as "block"


def _hot(output: Output | None, run: Callable[..., NoReturn], *values: object) -> NoReturn:
    """Run a hot command (`run(*values)` ends in `SystemExit`); as the process itself, lean at both ends.

    Only for the console script's own call (`output`, its guarded stdout): a caller that passes
    `argv` (a test, an embedding program) gets the `SystemExit` and keeps its garbage collector.
    As the process:
    - the cyclic collector stops: a tick lives some 30 ms and builds a few thousand objects
      that form no cycles (a ledger window's events, the goal's todos, the packet), and the
      collector's passes over them (a dozen on a big goal, about 1 ms) free nothing;
    - the process ends once its output is flushed, without the interpreter's teardown (which
      frees every module and object one by one, about 2 ms): unless an exit handler is
      registered (coverage's, say) or the exit code is not a number, in which case the
      interpreter exits as it always does.
    """
    if output is None:
        run(*values)
    import gc

    gc.disable()
    try:
        run(*values)
    except SystemExit as done:
        _leave(output.finish(done.code))
    raise AssertionError("a hot command always ends in SystemExit")  # pragma: no cover


def _leave(code: object) -> NoReturn:
    """Exit with `code` (stdout already flushed by `Output.finish`), straight away when that is safe."""
    import atexit

    registered = getattr(atexit, "_ncallbacks", None)
    if not isinstance(code, int) or registered is None or registered() != 0:
        raise SystemExit(code)
    try:
        sys.stderr.flush()
    except BaseException:
        raise SystemExit(code) from None
    os._exit(code)


def _exit(run: Callable[..., int], *values: object) -> NoReturn:
    """Exit with `run(*values)`'s code; an unexpected exception is one internal-error line, as typer's group."""
    try:
        code = run(*values)
    except Exception as error:  # never a traceback (cli/output.py loads only for this)
        from loopx_core.cli.output import report_internal

        code = report_internal(error, None)
    raise SystemExit(code)


def _hook(hook: dict[str, str | None]) -> NoReturn:
    from loopx_core.store.choice import TickStart

    with TickStart(hook["root"], hook["goal_id"]):  # a team store's connection starts now, as a tick's
        from loopx_core.cli.hook_cmds import run_hook

        _exit(run_hook, hook["name"], hook["goal_id"], hook["agent_id"], hook["root"])


def _should_run(fast: dict[str, object]) -> NoReturn:
    from loopx_core.store.choice import TickStart

    with TickStart(fast["root"], fast["goal_id"]):  # type: ignore[arg-type]  # a team store's connection starts now
        _tick(fast)


def _tick(fast: dict[str, object]) -> NoReturn:
    from loopx_core.cli.output import report_internal, resolve
    from loopx_core.cli.should_run import run_should_run

    # as the typer command: `auto` is JSON in a pipe, else the packet's Markdown (its human form)
    shown = resolve(fast.get("format", "auto"))  # type: ignore[arg-type]
    fmt = "json" if shown == "json" else "markdown"
    try:
        code = run_should_run(
            fast["root"],  # type: ignore[arg-type]
            fast["goal_id"],  # type: ignore[arg-type]
            fast["agent_id"],  # type: ignore[arg-type]
            fast["capability"] or None,  # type: ignore[arg-type]
            fast.get("surface"),  # type: ignore[arg-type]
            fmt,
            current_rrule=fast.get("current_rrule"),  # type: ignore[arg-type]
        )
    except Exception as error:  # the fast path's last line of defence against a traceback
        code = report_internal(error, fmt)
    raise SystemExit(code)
