"""Output and errors: JSON or Markdown on stdout, one error line on stderr, exit codes."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from typing import Any

from loopx_core.errors import LoopxError

_ABSOLUTE_PATH = re.compile(r"(?:(?<=\s)|(?<=^)|(?<=['\"(=]))/[^\s'\")]*")


class Format(StrEnum):
    """Output formats: JSON for machines, Markdown for people."""

    json = "json"
    markdown = "markdown"


def dumps(data: Any) -> str:
    """Compact one-line, strictly valid JSON (what a model or script reads every tick).

    A non-finite number (`NaN`, `Infinity`) is not JSON: it is refused as an internal error
    rather than printed, so no reader ever chokes on LoopX output.
    """
    try:
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError as bad:
        raise LoopxError(f"refusing to print invalid JSON ({bad})") from None


def emit(data: Any, fmt: Format, markdown: Callable[[Any], str] | str) -> None:
    """Print `data` as JSON, or its Markdown rendering."""
    if fmt is Format.json:
        sys.stdout.write(dumps(data) + "\n")
    else:
        text = markdown if isinstance(markdown, str) else markdown(data)
        sys.stdout.write(text if text.endswith("\n") else text + "\n")


def report_error(error: LoopxError, fmt: Format) -> int:
    """Print one error line on stderr (and the JSON error object under --format json)."""
    sys.stderr.write(f"loopx: error: {error.message}\n")
    if fmt is Format.json:
        sys.stdout.write(dumps(error.to_json()) + "\n")
    return int(error.exit_code)


@contextmanager
def reporting(fmt: Format) -> Iterator[None]:
    """Turn a `LoopxError` raised in the block into its error output and exit code."""
    try:
        yield
    except LoopxError as error:
        raise SystemExit(report_error(error, fmt)) from None
    except KeyboardInterrupt:
        sys.stderr.write("loopx: interrupted\n")
        raise SystemExit(130) from None


def requested_format(args: list[str], default: Format | None) -> Format | None:
    """The `--format`/`-f` value named in `args` (the last one wins), else `default`."""
    found = default
    for index, word in enumerate(args):
        value: str | None = None
        if word in ("--format", "-f") and index + 1 < len(args):
            value = args[index + 1]
        elif word.startswith("--format="):
            value = word.partition("=")[2]
        elif word.startswith("-f") and len(word) > 2 and not word.startswith("--"):
            value = word[2:]
        if value in Format.__members__:
            found = Format(value)
    return found


def report_usage(message: str, fmt: Format | None, *, prefix: str = "loopx: error: ") -> None:
    """Print a usage error (bad option, missing argument) as one line, plus the JSON object."""
    first = " ".join(message.split())
    sys.stderr.write(f"{prefix}{first}\n")
    if fmt is Format.json:
        from loopx_core.errors import UsageError

        sys.stdout.write(dumps(UsageError(first).to_json()) + "\n")


def report_internal(error: BaseException, fmt: Format | None) -> int:
    """Print an unexpected exception as one line (no traceback, no path); exit 1.

    `LOOPX_DEBUG=1` re-raises it instead, for the traceback.
    """
    import os

    if os.environ.get("LOOPX_DEBUG"):
        raise error
    detail = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
    detail = _ABSOLUTE_PATH.sub("<path>", " ".join(detail.split()))[:200]
    message = f"internal error: {type(error).__name__}: {detail}"
    message += " (a bug: please report it; LOOPX_DEBUG=1 shows the traceback)"
    return report_error(LoopxError(message, code="internal"), fmt or Format.markdown)
