"""Output and errors, as `gh` does: people on a terminal, JSON in a pipe, one error line on stderr.

`--format auto` (every command's default) is `human` when stdout is a terminal and `json`
otherwise; `human` prints aligned tables with `rich` (imported only on that path, never by
the commands hosts run every tick), `markdown` the same facts as Markdown, `json` one line.

Whatever reaches a person (human and Markdown output, the error line on stderr) passes through
`shown`: stored text is printed as given, except control characters a terminal would obey
(an ESC, a CSI, a bell...), which are shown as escapes (`\\x1b`). JSON is data: printed as is.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple, NoReturn

from loopx_core.cli import declare
from loopx_core.errors import LoopxError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from contextlib import AbstractContextManager
    from types import TracebackType
    from typing import Any

_ABSOLUTE_PATH = r"(?:(?<=\s)|(?<=^)|(?<=['\"(=]))/[^\s'\")]*"
"""An absolute path in a message; compiled on first use (re's cache): only an internal error shows one."""


def shown(text: str, *, newlines: bool = True) -> str:
    """`text` as a terminal may show it: control characters as escapes (`escapes.visible`)."""
    from loopx_core.escapes import visible  # a small module; loaded only when something is shown

    return visible(text, newlines=newlines)


FORMATS = declare.FORMATS
"""The `--format` values (typer's choices are `cli.formats.Format`, a `StrEnum` of these); the
functions here take either (a `Format` is a str)."""


def resolve(fmt: str | None) -> str:
    """The format actually printed: `auto` (or none) becomes human on a terminal, else JSON."""
    if fmt is None or fmt == "auto":
        return "human" if _stdout_is_terminal() else "json"
    return fmt


def _stdout_is_terminal() -> bool:
    try:
        return bool(sys.stdout.isatty())
    except (AttributeError, ValueError):  # no stdout, or a closed one
        return False


class Table(NamedTuple):
    """Rows under headers: an aligned table for people, a Markdown table on request.

    A cell is shown on one line whatever it holds (newlines and runs of spaces become one
    space, a `|` is escaped in Markdown, a control character is `shown` as its escape), so no
    title breaks the table or the terminal; None or "" shows `-`.
    """

    headers: Sequence[str]
    rows: Sequence[Sequence[object]]
    title: str | None = None
    empty: str = ""

    @staticmethod
    def cell(value: object) -> str:
        """One cell's text, on one line."""
        return "-" if value is None or value == "" else shown(" ".join(str(value).split())) or "-"

    def markdown(self) -> str:
        """The table as Markdown (its `empty` line when it has no rows)."""
        if not self.rows and self.empty:
            return shown(self.empty)
        out = [f"## {shown(self.title, newlines=False)}", ""] if self.title else []
        out += [
            "| " + " | ".join(shown(h, newlines=False) for h in self.headers) + " |",
            "|" + "---|" * len(self.headers),
        ]
        out += ["| " + " | ".join(self.cell(v).replace("|", "\\|") for v in row) + " |" for row in self.rows]
        return "\n".join(out)


Block = str | Table
if TYPE_CHECKING:
    Doc = Block | Sequence[Block]
    Render = Callable[[Any], Doc] | Doc


def dumps(data: Any) -> str:
    """Compact one-line, strictly valid JSON (what a model or script reads every tick).

    A non-finite number (`NaN`, `Infinity`) is not JSON: it is refused as an internal error
    rather than printed, so no reader ever chokes on LoopX output. Text is UTF-8 as it is, but
    for what a terminal would obey or hide (C1 controls, bidi overrides, zero-width and other
    format characters: `escapes.json_visible`), written as `\\uXXXX`: the same document.
    """
    try:
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError as bad:
        raise LoopxError(f"refusing to print invalid JSON ({bad})") from None
    if text.isascii() and "\x7f" not in text:
        return text
    from loopx_core.escapes import json_visible  # a small module; only for text that is not ASCII

    return json_visible(text)


def _blocks(doc: Doc) -> list[Block]:
    return [doc] if isinstance(doc, str | Table) else list(doc)


def as_markdown(doc: Doc) -> str:
    """A document (text and tables) as Markdown text."""
    return "\n\n".join(b.markdown() if isinstance(b, Table) else shown(b.rstrip("\n")) for b in _blocks(doc))


def emit(data: Any, fmt: str, markdown: Render, human: Render | None = None) -> None:
    """Print `data` as JSON, as Markdown (`markdown`), or for people (`human`, else `markdown`)."""
    shown = resolve(fmt)
    if shown == "json":
        sys.stdout.write(dumps(data) + "\n")
        return
    render = human if shown == "human" and human is not None else markdown
    doc = render(data) if callable(render) else render
    if shown == "markdown":
        text = as_markdown(doc)
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    else:
        print_human(doc)


def print_human(doc: Doc) -> None:
    """Print text as it is and tables aligned by `rich` (cli/human.py): colour and the terminal's
    width on a terminal, plain and unwrapped (up to 240 columns) in a pipe; no trailing spaces."""
    from loopx_core.cli.human import print_blocks  # rich: only on the human path

    print_blocks(_blocks(doc), _stdout_is_terminal())


def stderr_is_terminal() -> bool:
    """True when stderr is a terminal (where progress is shown)."""
    try:
        return bool(sys.stderr.isatty())
    except (AttributeError, ValueError):  # no stderr, or a closed one
        return False


class Status:
    """A live line on a terminal's stderr: a label and the elapsed seconds, redrawn as time goes.

    Text written through `write` (a child's output, streamed) appears above the line, which is
    redrawn under it once the text ends a line. Off a terminal there is no live line: the
    text alone goes to stderr.
    """

    def __init__(self, label: str, *, live: bool) -> None:
        import codecs
        import threading
        import time

        self.label, self.live = shown(label, newlines=False), live
        self._start = time.monotonic()
        self._lock = threading.Lock()
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._shown = False
        self._line_start = True
        self._closed = False

    def elapsed(self) -> float:
        """Seconds since the status began."""
        import time

        return time.monotonic() - self._start

    def _clear(self) -> None:
        if self._shown:
            sys.stderr.write("\r\x1b[K")
            self._shown = False

    def _draw(self) -> None:
        if self.live and self._line_start:
            sys.stderr.write(f"\r\x1b[K{self.label}: {self.elapsed():.0f}s elapsed")
            self._shown = True

    def tick(self) -> None:
        """Redraw the live line (a no-op off a terminal, or in the middle of a streamed line)."""
        with self._lock:
            if not self._closed:
                self._draw()
                sys.stderr.flush()

    def write(self, chunk: bytes) -> None:
        """Show `chunk` (UTF-8, a multi-byte character may span chunks) above the live line."""
        text = self._decoder.decode(chunk)
        if not text:
            return
        with self._lock:
            if self._closed:
                return
            self._clear()
            sys.stderr.write(text)
            self._line_start = text.endswith("\n")
            self._draw()
            sys.stderr.flush()

    def close(self) -> None:
        """End the status: the rest of a streamed line, then `LABEL: took Ns` on a terminal (once)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            rest = self._decoder.decode(b"", final=True)
            self._clear()
            sys.stderr.write(rest)
            self._line_start = self._line_start if not rest else rest.endswith("\n")
            if self.live:
                sys.stderr.write(
                    ("" if self._line_start else "\n") + f"{self.label}: took {self.elapsed():.1f}s\n"
                )
            sys.stderr.flush()


def progress(label: str, *, every: float = 1.0) -> AbstractContextManager[Status]:
    """Show `label` and the elapsed seconds on stderr while the block runs (only on a terminal);
    the block may stream a child's output through the `Status` it is given."""
    from contextlib import contextmanager  # loaded by the long commands only, not by a tick

    return contextmanager(_progress)(label, every)


def _progress(label: str, every: float) -> Iterator[Status]:
    import threading

    status = Status(label, live=stderr_is_terminal())
    done = threading.Event()

    def tick() -> None:
        while not done.wait(every):
            status.tick()

    ticker = threading.Thread(target=tick, name="loopx-progress", daemon=True)
    if status.live:
        ticker.start()
    try:
        yield status
    finally:
        done.set()
        if status.live:
            ticker.join()
        status.close()


def steps(fmt: str | None) -> Callable[[str], None] | None:
    """A step reporter for a long command: one line per step on stderr (`rendering claude-code...`),
    on a terminal only and never with JSON output; None where nothing is to be shown."""
    if not stderr_is_terminal() or resolve(fmt) == "json":
        return None

    def step(text: str) -> None:
        sys.stderr.write(f"{shown(text, newlines=False)}\u2026\n")
        sys.stderr.flush()

    return step


def report_error(error: LoopxError, fmt: str | None) -> int:
    """Print the error once on stderr, one line (control characters `shown`); the JSON error
    object on stdout, exactly as raised, only for JSON output."""
    sys.stderr.write(f"loopx: error: {shown(error.message, newlines=False)}\n")
    if resolve(fmt) == "json":
        sys.stdout.write(dumps(error.to_json()) + "\n")
    return int(error.exit_code)


def fail_after_output(error: LoopxError) -> NoReturn:
    """End a command that has printed its answer (one document) with `error`: its line on
    stderr and its exit code, and no second JSON document on stdout."""
    sys.stderr.write(f"loopx: error: {shown(error.message, newlines=False)}\n")
    raise SystemExit(int(error.exit_code))


class reporting:
    """Turn a `LoopxError` raised in the block into its error output and exit code (lower-case,
    as the `@contextmanager` function it was).

    A class rather than `@contextlib.contextmanager`: every command enters one, a tick too, and
    contextlib is an import a tick need not pay for (as `hosts.rules.plugin_call`).
    """

    __slots__ = ("fmt",)

    def __init__(self, fmt: str) -> None:
        self.fmt = fmt

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> bool:
        if isinstance(error, LoopxError):
            raise SystemExit(report_error(error, self.fmt)) from None
        if isinstance(error, KeyboardInterrupt):
            sys.stderr.write("loopx: interrupted\n")
            raise SystemExit(130) from None
        return False


def requested_format(args: list[str], default: str | None) -> str | None:
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
        if value in FORMATS:
            found = value
    return found


def report_usage(message: str, fmt: str | None, *, prefix: str = "loopx: error: ") -> None:
    """Print a usage error (bad option, missing argument) as one line, plus the JSON object.

    `fmt` None (a command without `--format`, such as a hook) never prints JSON.
    """
    first = " ".join(message.split())
    sys.stderr.write(f"{prefix}{shown(first, newlines=False)}\n")
    if fmt is not None and resolve(fmt) == "json":
        from loopx_core.errors import UsageError

        sys.stdout.write(dumps(UsageError(first).to_json()) + "\n")


def report_internal(error: BaseException, fmt: str | None) -> int:
    """Print an unexpected exception as one line (no traceback, no path); exit 1.

    `LOOPX_DEBUG=1` re-raises it instead, for the traceback.
    """
    import os
    import re

    if os.environ.get("LOOPX_DEBUG"):
        raise error
    detail = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
    detail = re.sub(_ABSOLUTE_PATH, "<path>", " ".join(detail.split()))[:200]
    message = f"internal error: {type(error).__name__}: {detail}"
    message += " (a bug: please report it; LOOPX_DEBUG=1 shows the traceback)"
    return report_error(LoopxError(message, code="internal"), fmt or "markdown")
