"""The fast entry: a host's tick (`quota should-run`, `hook NAME`, `heartbeat-prompt`) without typer.

`argparse` reads the command line against the commands' declarations (`cli.declare`), the
same the typer commands are built from. A command line it reads whole runs that command's
runner; anything else (help, completion, an unknown, malformed or misplaced option, any other
command) is None, and the caller hands the words to typer, which answers them.
"""

from __future__ import annotations

import argparse
import importlib
import os
from typing import Any

from loopx_core.cli.declare import FAST, ROOT, Fast

COMPLETION_VAR = "_LOOPX_COMPLETE"
"""Set when a shell asks for completions: typer answers those."""
OFF_VAR = "LOOPX_NO_FAST_PATH"
"""Set (to anything): every command line goes to typer (to compare both, or to debug)."""


class _NotOurs(Exception):
    """argparse would have printed a usage error: the command line is typer's to answer."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse's documented hook for its usage errors
        raise _NotOurs(message)


def _formatter(prog: str) -> argparse.HelpFormatter:
    """A fixed-width formatter: argparse checks each option's metavar with one, and never prints it
    here (typer prints every help), so it need not ask the terminal its width."""
    return argparse.HelpFormatter(prog, width=80)


def _parser(fast: Fast | None) -> _Parser:
    parser = _Parser(
        prog="loopx", add_help=False, allow_abbrev=False, exit_on_error=False, formatter_class=_formatter
    )
    if fast is None:  # the group: `--root R`, then the command's words
        parser.add_argument(*ROOT.names, dest=ROOT.dest)
        parser.add_argument("words", nargs=argparse.REMAINDER)
        return parser
    for opt in fast.options:
        parser.add_argument(
            *opt.names,
            dest=opt.dest,
            action="append" if opt.many else "store",
            choices=opt.choices or None,
            default=[] if opt.many else opt.default,
            required=opt.dest in fast.required,
        )
    if fast.argument is not None:
        parser.add_argument(fast.argument)
    return parser


def parse(argv: list[str]) -> tuple[Fast, dict[str, Any]] | None:
    """The fast command `argv` names and its values (`root` among them), or None for typer."""
    if os.environ.get(COMPLETION_VAR) or os.environ.get(OFF_VAR):
        return None
    if any(word[:1] == "-" and word[1:2] not in ("-", "") and word[2:3] == "=" for word in argv):
        return None  # `-a=x`: argparse reads `x`, click (typer) reads `=x`; typer's reading stands
    try:
        group = _parser(None).parse_args(argv)
        words: list[str] = group.words
        fast = next((f for f in FAST if tuple(words[: len(f.path)]) == f.path), None)
        if fast is None or words[len(fast.path) : len(fast.path) + 1] == ["--"]:
            return None
        values = vars(_parser(fast).parse_args(words[len(fast.path) :]))
    except (_NotOurs, argparse.ArgumentError):
        return None
    values["root"] = group.root if group.root is not None else os.environ.get("LOOPX_ROOT") or None
    return fast, values


def run(fast: Fast, values: dict[str, Any]) -> int:
    """Run `fast`'s runner with `values`; its exit code."""
    module, _, name = fast.runner.partition(":")
    runner = getattr(importlib.import_module(module), name)
    return int(runner(**values))
