"""The `loopx` console script.

A host's tick (`quota should-run`, `hook NAME`, `heartbeat-prompt`) goes through the fast entry
(`cli.fast`: argparse over the commands' declarations) when argparse reads the command line
whole; everything else goes to the typer application (`cli.app`), which loads only the
command asked for. Both run the same runner with the same values.
"""

from __future__ import annotations

import os
import sys

from loopx_core.cli.pipe import READER_GONE as READER_GONE  # where callers have always named it
from loopx_core.cli.pipe import Output, guard_stdout


def main(argv: list[str] | None = None) -> None:
    """Run `loopx` with `argv`; by default the process arguments, as the process itself: its
    stdout guarded (cli/pipe.py: output that cannot be written is one line and exit 1, never a
    traceback)."""
    if argv is not None:
        _main(argv)
        return
    output: Output = guard_stdout()
    try:
        _main(sys.argv[1:])
    except SystemExit as done:
        raise SystemExit(output.finish(done.code)) from None
    raise SystemExit(output.finish(0))


def _main(args: list[str]) -> None:
    """Dispatch `args`: a tick through the fast entry, anything else through typer."""
    if not all(map(str.isascii, args)) or not (os.environ.get("LOOPX_ROOT") or "").isascii():
        _refuse_undecodable(args)  # returns when every word is UTF-8 after all
    from loopx_core.cli.declare import FAST

    if any(f.path[-1] in args for f in FAST):  # perhaps a tick: argparse reads it if it can
        from loopx_core.cli import fast

        parsed = fast.parse(args)
        if parsed is not None:
            raise SystemExit(_guarded(fast.run, *parsed))
    try:
        from loopx_core.cli.app import app
    except Exception as error:  # a broken environment: one line, never a traceback
        from loopx_core.cli.output import report_internal, requested_format

        raise SystemExit(report_internal(error, requested_format(args, None))) from None
    app(args=args, prog_name="loopx")


def _guarded(run: object, *values: object) -> int:
    """`run(*values)`'s exit code; an unexpected exception is one internal-error line, as typer's group."""
    try:
        return run(*values)  # type: ignore[operator,no-any-return]
    except Exception as error:  # the fast entry's last line of defence against a traceback
        from loopx_core.cli.output import report_internal

        return report_internal(error, None)


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
