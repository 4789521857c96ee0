"""Write loopx_core/frozen_re_codes.py: the hot path's regexes, compiled ahead for this interpreter.

`loopx_core.frozen_re.compile(pattern)` builds a pattern with `_sre.compile` from the code frozen
here, so the hot path never imports `re` (and the `enum` it pulls in). This script is the one
place that code comes from: for each pattern it does what CPython 3.11's `re._compiler.compile`
does before it calls `_sre.compile` (parse, `_code`, the group maps), and writes the arguments
with the interpreter they were made for. The patterns are read from the modules that own them,
so a changed pattern makes the table stale. tests/test_frozen_re.py checks the table is current
and that what it builds is `re.compile`'s pattern.

Run `python scripts/gen_frozen_re.py` after changing a pattern (`--check`: exit 1 if stale).
"""

from __future__ import annotations

import _sre
import importlib
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from re import _compiler, _parser  # type: ignore[attr-defined]

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))  # ruff_formatted, shared by the generators

from ruff_formatted import ruff_formatted  # noqa: E402

TARGET = REPO / "loopx_core" / "frozen_re_codes.py"
SOURCES: tuple[tuple[str, str], ...] = (
    ("loopx_core.ids", "_ID_RE"),
    ("loopx_core.models.identity", "_TURN_KEY"),
    ("loopx_core.models.lean_runtime", "TIME_PATTERN"),
    ("loopx_core.models.lean", "LINE_FORMS"),
    ("loopx_core.cli.lean_settle", "_INT"),
    ("loopx_core.cli.lean_settle", "_FLOAT"),
    ("loopx_core.escapes", "_INVISIBLE"),
    ("loopx_core.escapes", "_INVISIBLE_OR_NEWLINE"),
    ("loopx_core.escapes", "_UNSEEN_IN_JSON"),
)
"""Where each frozen pattern lives (the regexes `loopx hook claude-stop`, should-run and the lean
settlement commands compile): a str, a compiled pattern, or `LINE_FORMS` (each form's regex)."""
WIDTH = 100
"""How wide a line of a frozen code tuple may grow (the repository's limit is 110)."""

Frozen = tuple[int, tuple[int, ...], int, dict[str, int], tuple[str | None, ...]]
"""What `_sre.compile` takes after the pattern: flags, code, groups, groupindex, indexgroup."""


def _patterns_of(module: str, name: str) -> list[tuple[str, str]]:
    """(pattern, where it comes from) for the attribute `name` of `module`."""
    value = getattr(importlib.import_module(module), name, None)
    if value is None:
        raise SystemExit(f"{module} has no {name}: update SOURCES in scripts/{Path(__file__).name}")
    if isinstance(value, Mapping):
        return [(form[0], f"{module}.{name}[{key!r}][0]") for key, form in value.items()]
    text = getattr(value, "pattern", value)
    if not isinstance(text, str):
        raise SystemExit(f"{module}.{name} is neither a str pattern nor a compiled one")
    return [(text, f"{module}.{name}")]


def collect(sources: Sequence[tuple[str, str]] = SOURCES) -> dict[str, list[str]]:
    """Every pattern of `sources`, in their order, each with the names it is known by."""
    found: dict[str, list[str]] = {}
    for module, name in sources:
        for text, origin in _patterns_of(module, name):
            found.setdefault(text, []).append(origin)
    return found


def frozen(pattern: str) -> Frozen:
    """The arguments `re.compile(pattern)` hands `_sre.compile` after the pattern (no flags)."""
    parsed = _parser.parse(pattern, 0)
    code = _compiler._code(parsed, 0)
    groupindex = dict(parsed.state.groupdict)
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for key, index in groupindex.items():
        indexgroup[index] = key
    # The opcodes are int subclasses whose repr is their name: the table holds plain ints.
    numbers = tuple(int(word) for word in code)
    return int(parsed.state.flags), numbers, parsed.state.groups - 1, groupindex, tuple(indexgroup)


def _packed(numbers: Sequence[int], indent: str) -> list[str]:
    """`numbers` as lines of a tuple's body, each at most `WIDTH` characters wide."""
    lines: list[str] = []
    line = indent
    for number in numbers:
        item = f"{number},"
        if line != indent and len(line) + 1 + len(item) > WIDTH:
            lines.append(line)
            line = indent
        line += item if line == indent else " " + item
    if line != indent:
        lines.append(line)
    return lines


def _entry(pattern: str, origins: Sequence[str]) -> list[str]:
    """The table's lines for one pattern: where it comes from, then its key and frozen arguments."""
    flags, code, groups, groupindex, indexgroup = frozen(pattern)
    return [
        *(f"    # {origin}" for origin in origins),
        f"    {pattern!r}: (",
        f"        {flags},",
        "        (",
        *_packed(code, " " * 12),
        "        ),",
        f"        {groups},",
        f"        {groupindex!r},",
        f"        {indexgroup!r},",
        "    ),",
    ]


def render(patterns: Mapping[str, Sequence[str]]) -> str:
    """The table module for `patterns` (pattern -> its names), before formatting."""
    version = tuple(sys.version_info[:2])
    lines = [
        f'"""Generated by scripts/{Path(__file__).name} (`--check`: is it current?): do not edit.',
        "",
        "The arguments `re.compile(pattern)` hands `_sre.compile` for each pattern the hot path compiles,",
        "made for the interpreter named below: loopx_core.frozen_re uses them only on that interpreter.",
        '"""',
        "",
        f"IMPLEMENTATION = {sys.implementation.name!r}",
        f"VERSION = {version!r}",
        f"MAGIC = {_sre.MAGIC!r}",
        f"CODESIZE = {_sre.CODESIZE!r}",
        "",
        "# fmt: off",
        "TABLE = {",
        *(line for pattern, origins in patterns.items() for line in _entry(pattern, origins)),
        "}",
        "# fmt: on",
        '"""pattern -> (flags, code, groups, groupindex, indexgroup), as `_sre.compile` takes them."""',
        "",
    ]
    return "\n".join(lines)


def _formatted(text: str, target: Path) -> str:
    """`text` as `ruff format` leaves it (the repository's style)."""
    return ruff_formatted(text, target, "table")


def run(*, check: bool, patterns: Mapping[str, Sequence[str]], target: Path = TARGET) -> int:
    """Write the table for `patterns` to `target` (0), or with `check` only compare: 1 if stale."""
    text = _formatted(render(patterns), target)
    if check:
        current = target.read_text() if target.exists() else ""
        if current != text:
            shown = target.relative_to(REPO) if target.is_relative_to(REPO) else target.name
            print(f"{shown} is stale: run python scripts/{Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    target.write_text(text)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Write (or `--check`) loopx_core/frozen_re_codes.py from the patterns of `SOURCES`."""
    args = list(sys.argv[1:] if argv is None else argv)
    unknown = [arg for arg in args if arg != "--check"]
    if unknown:
        print(f"usage: python scripts/{Path(__file__).name} [--check]", file=sys.stderr)
        return 2
    return run(check="--check" in args, patterns=collect())


if __name__ == "__main__":
    sys.exit(main())
