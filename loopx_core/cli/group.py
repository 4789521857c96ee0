"""The root command's group: commands loaded when asked for, grouped help, and usage errors and
unexpected exceptions as LoopX reports them."""

from __future__ import annotations

import difflib
import importlib
import sys
from collections.abc import Sequence
from enum import Enum
from typing import Any, ClassVar, NamedTuple, NoReturn

import typer
from typer.core import TyperGroup

from loopx_core.cli.common import suggestion
from loopx_core.cli.formats import Format
from loopx_core.cli.output import report_internal, report_usage, requested_format

HOOK_COMMANDS = ("hook",)
"""Commands a host runs as a hook: their usage errors exit 1, since hosts read 2 as "block"."""


class Entry(NamedTuple):
    """A command of the root group: where it lives, its section of the help, what it is for."""

    target: str
    """`module:attribute` under `loopx_core.cli`: a typer app (made with `add_completion=False`:
    completion is the root's) or a command function."""
    section: str
    summary: str


class LoopxGroup(TyperGroup):
    """The root command: its commands loaded when asked for; usage errors and unexpected
    exceptions as LoopX reports them.

    `lazy` names every command (`Entry`); `loopx X` imports X's module only, and the help lists
    every command by section without importing any. A usage error is one line on stderr (and
    the JSON error object under `--format json`), exit 2; an unexpected exception is one
    `internal error` line, exit 1: never a traceback.
    """

    lazy: ClassVar[dict[str, Entry]] = {}

    def list_commands(self, ctx: Any) -> list[str]:
        """Every command, in the table's order."""
        return list(self.lazy)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        """The command `cmd_name`, its module imported now (None: no such command)."""
        entry = self.lazy.get(cmd_name)
        if entry is None:
            return None
        module, _, attribute = entry.target.partition(":")
        found = getattr(importlib.import_module(f"loopx_core.cli.{module}"), attribute)
        if not isinstance(found, typer.Typer):  # a command function: a typer app of its own
            single = typer.Typer(add_completion=False)
            single.command(cmd_name)(found)
            found = single
        command = typer.main.get_command(found)
        command.name = cmd_name
        command.short_help = entry.summary
        _plain_help(command)
        return command

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        """The command `args` names; a mistyped one suggests the closest (`Did you mean 'status'?`)."""
        try:
            return super().resolve_command(ctx, args)
        except Exception as error:
            close = difflib.get_close_matches(args[0], list(self.lazy), n=1, cutoff=0.6) if args else []
            if close and _is_usage_error(error):
                error.message = f"{error.message.rstrip('.')}. Did you mean {close[0]!r}?"  # type: ignore[attr-defined]
            raise

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The commands by section, each with what it is for (no command module imported)."""
        sections: dict[str, list[tuple[str, str]]] = {}
        for name, entry in self.lazy.items():
            sections.setdefault(entry.section, []).append((name, entry.summary))
        for section, rows in sections.items():
            with formatter.section(f"{section} commands"):
                formatter.write_dl(rows)

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        """Run the command line; exit with its documented code."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        words = list(sys.argv[1:] if args is None else args)
        try:
            result = super().main(words, prog_name, complete_var, False, **extra)
        except SystemExit:
            raise
        except (typer.Abort, EOFError):
            sys.stderr.write("loopx: aborted\n")
            raise SystemExit(1) from None
        except Exception as error:  # the last line of defence against a traceback
            if _is_usage_error(error):
                _exit_usage(error, words)
            raise SystemExit(report_internal(error, requested_format(words, None))) from None
        raise SystemExit(result if isinstance(result, int) else 0)


def _plain_help(command: Any) -> None:
    """Help as the root prints it (plain text, no rich markup), for `command` and its subcommands."""
    command.rich_markup_mode = None
    for sub in getattr(command, "commands", {}).values():
        _plain_help(sub)


def _is_usage_error(error: Exception) -> bool:
    """Click's own usage errors (bad option, missing value), whichever click typer bundles."""
    return hasattr(error, "format_message") and hasattr(error, "exit_code")


def _exit_usage(error: Any, words: list[str]) -> NoReturn:
    ctx = getattr(error, "ctx", None)
    command = getattr(ctx, "command", None)
    if type(error).__name__ == "NoArgsIsHelpError":
        error.show()  # the help text, as click prints it
        raise SystemExit(int(error.exit_code))
    default = next(
        (
            p.default
            for p in getattr(command, "params", [])
            if p.name == "fmt" and isinstance(p.default, Format)
        ),
        None,
    )
    path = " ".join(["loopx", *(getattr(ctx, "command_path", "") or "loopx").split()[1:]])
    hook = path.split()[1:2] == ["hook"] or (words[:1] and words[0] in HOOK_COMMANDS)
    message = (
        f"{error.format_message().replace('Value error, ', '')}{_hint(error, words)} (see `{path} --help`)"
    )
    report_usage(
        message, requested_format(words, default), prefix="loopx: hook: " if hook else "loopx: error: "
    )
    raise SystemExit(1 if hook else int(getattr(error, "exit_code", 2)))


def _hint(error: Any, words: list[str]) -> str:
    """` (did you mean X?)` for a mistyped choice value (click suggests commands and options)."""
    param = getattr(error, "param", None)
    choices = _choices(param)
    given = _value_of(list(getattr(param, "opts", [])), words) if choices else None
    return suggestion(given, choices) if given else ""


def _choices(param: Any) -> list[str]:
    """The values a parameter takes, when it is a choice (an Enum, as typer declares them)."""
    bare = getattr(getattr(param, "type_descriptor", None), "annotation", None)
    if isinstance(bare, type) and issubclass(bare, Enum):
        return [str(member.value) for member in bare]
    return [str(c) for c in getattr(getattr(param, "type", None), "choices", None) or []]


def _value_of(opts: list[str], words: list[str]) -> str | None:
    """The last value `words` gives an option named by `opts` (`--opt V`, `--opt=V`, `-oV`)."""
    found = None
    for index, word in enumerate(words):
        for opt in opts:
            if word == opt and index + 1 < len(words):
                found = words[index + 1]
            elif word.startswith(opt + "=") and opt.startswith("--"):
                found = word[len(opt) + 1 :]
            elif len(opt) == 2 and word.startswith(opt) and len(word) > 2 and not word.startswith("--"):
                found = word[2:]
    return found
