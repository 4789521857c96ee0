"""The text of a refused MCP call: LoopX's JSON error object, short, and naming no local path.

Nothing here imports the SDK: these are the rules for what a client may read back.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from pydantic import ValidationError

from loopx_core.errors import LoopxError, UsageError
from loopx_core.ids import ID_PATTERN
from loopx_core.models.domain import describe

MAX_MESSAGE = 1000
"""Longest error message sent back, in characters."""
MAX_RUN = 96
"""Longest run of non-space characters (an echoed id, say) kept whole in a message."""
KEEP_OF_RUN = 48
MAX_LISTED = 5
"""Argument problems named in one message; the rest are counted."""

_LONG_RUN = re.compile(rf"\S{{{MAX_RUN + 1},}}")
_SURROGATE = re.compile("[\ud800-\udfff]")
_UNSENDABLE = re.compile("[\ud800-\udfff\x00]")
"""What no tool argument may hold: a lone surrogate (not Unicode text), a NUL (no command line
can carry one, so the tool's CLI twin never could; the dashboard refuses it alike)."""


def shorten(text: str) -> str:
    """`text` with every over-long run of non-space characters cut, and capped at MAX_MESSAGE."""
    text = _LONG_RUN.sub(lambda m: f"{m[0][:KEEP_OF_RUN]}…[{len(m[0]) - KEEP_OF_RUN} more chars]", text)
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 1] + "…"


def _where(loc: tuple[int | str, ...]) -> str:
    head, *rest = loc or ("arguments",)
    return shorten(str(head)) + "".join(f"[{shorten(repr(part))}]" for part in rest)


def _problem(error: dict[str, object]) -> str:
    kind = error.get("type")
    if kind == "extra_forbidden":
        return "unknown argument"
    if kind == "missing":
        return "required argument is missing"
    context = error.get("ctx")
    if (
        kind == "string_pattern_mismatch"
        and isinstance(context, dict)
        and context.get("pattern") == ID_PATTERN
    ):
        return f"not a valid id: use {describe('Id')}"
    return shorten(str(error.get("msg", "invalid value")))[:200]


def bad_arguments(tool: str, error: ValidationError, accepted: Iterable[str]) -> UsageError:
    """The usage error for arguments that do not fit the tool's signature (no value echoed)."""
    problems = [f"{_where(tuple(e['loc']))}: {_problem(dict(e))}" for e in error.errors()]
    listed = "; ".join(problems[:MAX_LISTED])
    if len(problems) > MAX_LISTED:
        listed += f"; and {len(problems) - MAX_LISTED} more"
    names = ", ".join(accepted) or "none"
    return UsageError(f"invalid arguments for {tool}: {listed} (its arguments: {names})")


def lone_surrogate(value: object) -> tuple[str, str] | None:
    """Where in `value` (JSON-like: dicts, lists, strings) a string holds a lone surrogate, and which one.

    Such a string (`"\\udcff"` decoded by a lenient JSON parser, or passed in-process) is not
    Unicode text: no file, packet or JSON reply can hold it. The answer is a location
    (`title`, `evidence[2]`, `an argument name`) and the surrogate written as `\\uXXXX`; None
    when every string, keys included, is text. Shared containers are walked once.
    """
    return _find(value, _SURROGATE)


def unsendable(value: object) -> tuple[str, str] | None:
    """As `lone_surrogate`, for a lone surrogate or a NUL: what no tool argument may hold."""
    return _find(value, _UNSENDABLE)


def _find(value: object, pattern: re.Pattern[str]) -> tuple[str, str] | None:
    for where, text in _strings(value):
        if found := pattern.search(text):
            return where, f"\\u{ord(found[0]):04x}"
    return None


def _strings(value: object) -> Iterator[tuple[str, str]]:
    """Every string in `value`, keys included, with where it is (an argument name for a top-level key)."""
    stack: list[tuple[str, object]] = [("", value)]
    seen: set[int] = set()
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            yield where or "arguments", item
        elif isinstance(item, dict | list | tuple) and id(item) not in seen:
            seen.add(id(item))
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            for key, inner in reversed(list(pairs)):
                if isinstance(key, str):
                    yield (f"{where}, a key" if where else "an argument name"), key
                stack.append((f"{where}[{shorten(repr(key))}]" if where else shorten(str(key)), inner))


MAX_TEXT = 131_072
"""Longest string argument, in characters: Linux's longest command-line word (MAX_ARG_STRLEN), so
no tool takes a text its CLI twin could not be given (the dashboard's fields stop at 2,000)."""
MAX_ALL_TEXT = 2_097_152
"""Most text in one call's arguments, in characters: a whole command line's (ARG_MAX)."""


def too_long(tool: str, value: object, accepted: Iterable[str]) -> UsageError | None:
    """The usage error for arguments holding a string, or text in all, longer than a command line carries."""
    total = 0
    for where, text in _strings(value):
        if len(text) > MAX_TEXT:
            problem = f"{where}: longer than {MAX_TEXT} characters ({len(text)})"
            break
        total += len(text)
        if total > MAX_ALL_TEXT:
            problem = f"arguments: more than {MAX_ALL_TEXT} characters of text in all"
            break
    else:
        return None
    names = ", ".join(accepted) or "none"
    return UsageError(
        f"invalid arguments for {tool}: {problem}, more than a command line carries (its arguments: {names})"
    )


def not_text(tool: str, where: str, char: str, accepted: Iterable[str]) -> UsageError:
    """The usage error for an argument holding a lone surrogate or a NUL (`char`, shown escaped)."""
    names = ", ".join(accepted) or "none"
    why = (
        "it holds a NUL character (\\u0000), which no command line can carry"
        if char == "\\u0000"
        else f"not Unicode text (it holds a lone surrogate, {char})"
    )
    return UsageError(f"invalid arguments for {tool}: {where}: {why} (its arguments: {names})")


def unknown_tool(name: str, known: Iterable[str]) -> UsageError:
    """The usage error for a tool name the server does not have."""
    return UsageError(f"unknown tool {shorten(name)!r}: the tools are {', '.join(sorted(known))}")


def internal(tool: str) -> LoopxError:
    """The error for an unexpected exception inside a tool (its text stays on the server)."""
    return LoopxError(
        f"internal error in tool {tool}: the call was not completed; please report it", code="internal"
    )


_FLAG = re.compile(r"(?<![\w-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)(?![\w-])")
_QUOTED = re.compile(r"(`[^`]*`)")
ALIASES = {"capability": "required_capabilities"}
"""CLI options whose MCP argument is not simply the option's name in snake case."""


def in_tool_words(message: str, arguments: Iterable[str]) -> str:
    """`message` (written for the CLI) with each `--option` that is one of the tool's arguments named as such.

    The operations' messages name the CLI's options (`a todo needs a non-empty --title`); a
    client of the tool sent `title`. A quoted command (`` `loopx ... --goal-id g` ``) is an
    instruction to run as written, and an option the tool does not take stays as it is.
    """
    names = set(arguments)

    def argument(found: re.Match[str]) -> str:
        name = ALIASES.get(found[1], found[1].replace("-", "_"))
        return name if name in names else found[0]

    parts = _QUOTED.split(message)
    return "".join(part if i % 2 else _FLAG.sub(argument, part) for i, part in enumerate(parts))


def error_text(error: LoopxError, roots: Iterable[Path] = (), arguments: Iterable[str] = ()) -> str:
    """The JSON error object of `error`: the project root made relative, options named as the
    tool's `arguments`, the message shortened."""
    data = error.to_json()
    body = data["error"]
    assert isinstance(body, dict)
    message = in_tool_words(str(body.get("message", "")), arguments)
    for root in roots:
        for form in {str(root), str(root.resolve())}:
            if len(form) > 1:
                message = message.replace(form + "/", "").replace(form, ".")
    body["message"] = shorten(message)
    return json.dumps(data, ensure_ascii=False)
