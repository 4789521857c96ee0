"""Output and errors: JSON or Markdown on stdout, one error line on stderr, exit codes."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from typing import Any

from loopx_core.errors import LoopxError


class Format(StrEnum):
    """Output formats: JSON for machines, Markdown for people."""

    json = "json"
    markdown = "markdown"


def dumps(data: Any) -> str:
    """Compact one-line JSON (what a model or script reads every tick)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


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
