"""The text of a refused MCP call: LoopX's JSON error object, short, and naming no local path.

Nothing here imports the SDK: these are the rules for what a client may read back.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

from pydantic import ValidationError

from loopx_core.errors import LoopxError, UsageError
from loopx_core.ids import ID_PATTERN
from loopx_core.models.domain import Id, describe

MAX_MESSAGE = 1000
"""Longest error message sent back, in characters."""
MAX_RUN = 96
"""Longest run of non-space characters (an echoed id, say) kept whole in a message."""
KEEP_OF_RUN = 48
MAX_LISTED = 5
"""Argument problems named in one message; the rest are counted."""

_LONG_RUN = re.compile(rf"\S{{{MAX_RUN + 1},}}")


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
        return f"not a valid id: use {describe(Id)}"
    return shorten(str(error.get("msg", "invalid value")))[:200]


def bad_arguments(tool: str, error: ValidationError, accepted: Iterable[str]) -> UsageError:
    """The usage error for arguments that do not fit the tool's signature (no value echoed)."""
    problems = [f"{_where(tuple(e['loc']))}: {_problem(dict(e))}" for e in error.errors()]
    listed = "; ".join(problems[:MAX_LISTED])
    if len(problems) > MAX_LISTED:
        listed += f"; and {len(problems) - MAX_LISTED} more"
    names = ", ".join(accepted) or "none"
    return UsageError(f"invalid arguments for {tool}: {listed} (its arguments: {names})")


def unknown_tool(name: str, known: Iterable[str]) -> UsageError:
    """The usage error for a tool name the server does not have."""
    return UsageError(f"unknown tool {shorten(name)!r}: the tools are {', '.join(sorted(known))}")


def internal(tool: str) -> LoopxError:
    """The error for an unexpected exception inside a tool (its text stays on the server)."""
    return LoopxError(
        f"internal error in tool {tool}: the call was not completed; please report it", code="internal"
    )


def error_text(error: LoopxError, roots: Iterable[Path] = ()) -> str:
    """The JSON error object of `error`, its message shortened and the project root made relative."""
    data = error.to_json()
    body = data["error"]
    assert isinstance(body, dict)
    message = str(body.get("message", ""))
    for root in roots:
        for form in {str(root), str(root.resolve())}:
            if len(form) > 1:
                message = message.replace(form + "/", "").replace(form, ".")
    body["message"] = shorten(message)
    return json.dumps(data, ensure_ascii=False)
