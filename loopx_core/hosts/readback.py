"""Reading an installation back (`Host.verify`): every file there, parseable, LoopX's part in place.

The installer's `--check` already compares each owned file with what LoopX wrote and each
merge with its fragment; this is the host's reading on top of that, in the terms a host would
choke on: a file that does not parse, front matter that lost a key, an owned key that differs.
"""

from __future__ import annotations

import contextlib
import json
import tomllib
from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import Any

from loopx_core.hosts import blocks
from loopx_core.hosts.model import FacadeFile, Finding

ARRAY = "[]"


def front_matter(text: str) -> dict[str, str] | None:
    """The top-level `key: value` pairs of a Markdown file's YAML front matter, None without one."""
    if not text.startswith("---\n"):
        return None
    end = text.find("\n---\n", 3)
    if end < 0:
        return None
    found: dict[str, str] = {}
    for line in text[4:end].splitlines():
        key, sep, value = line.partition(":")
        if not sep or line[:1] in (" ", "#", "-"):
            continue
        value = value.strip()
        if value.startswith('"'):
            with contextlib.suppress(ValueError):
                value = json.loads(value)
        found[key.strip()] = value
    return found


def owned_key_problems(expected: dict[str, Any], actual: Any, key_path: tuple[str, ...]) -> list[str]:
    """Compare one owned key (a trailing "[]": one element of an array) of parsed JSON/TOML data."""
    want: Any = expected
    have: Any = actual
    walked: list[str] = []
    for part in key_path:
        if part == ARRAY:
            element = want[0] if isinstance(want, list) and want else want
            if not isinstance(have, list) or element not in have:
                return [f"{'.'.join(walked)} lacks the LoopX entry {json.dumps(element)}"]
            return []
        want = want[part]
        if not isinstance(have, dict) or part not in have:
            return [f"no {'.'.join([*walked, part])} entry"]
        have = have[part]
        walked.append(part)
    if have == want:
        return []
    if isinstance(want, dict) and isinstance(have, dict):
        return [
            f"{'.'.join(walked)}.{name} is {json.dumps(have.get(name))}, expected {json.dumps(value)}"
            for name, value in want.items()
            if have.get(name) != value
        ]
    return [f"{'.'.join(walked)} is {json.dumps(have)}, expected {json.dumps(want)}"]


def parse(kind: str, text: str) -> Any:
    """`text` read as JSON or TOML; ValueError with the parser's reason otherwise."""
    try:
        return json.loads(text) if kind == "json" else tomllib.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"invalid {kind.upper()}: {str(exc)[:200]}") from None


def data_kind(f: FacadeFile) -> str | None:
    """`json` or `toml` for a file of that format (merged or by its suffix), else None."""
    if f.merge in ("json", "toml"):
        return f.merge
    suffix = PurePosixPath(f.path).suffix.lower()
    return suffix[1:] if suffix in (".json", ".toml") else None


def problems(f: FacadeFile, text: str, owner: str) -> list[str]:
    """What is wrong with `text`, the installed copy of `f` (`owner`: the host, for Markdown blocks)."""
    if f.merge == "markdown":
        return (
            [] if blocks.body(text, owner) == f.content.strip() else ["the LoopX block is missing or differs"]
        )
    kind = data_kind(f)
    if kind is not None:
        try:
            actual = parse(kind, text)
        except ValueError as exc:
            return [str(exc)]
        fragment = parse(kind, f.content)
        return [p for key_path in f.owned_keys for p in owned_key_problems(fragment, actual, key_path)]
    wanted = front_matter(f.content) if f.path.endswith(".md") else None
    if not wanted:
        return []
    meta = front_matter(text)
    if meta is None:
        return ["no front matter"]
    return [
        f"front matter {k} is {_shown(meta.get(k))}, expected {_shown(v)}"
        for k, v in wanted.items()
        if meta.get(k) != v
    ]


def _shown(value: object) -> str:
    """A front-matter value as JSON (`["a", "b"]`, `"x"`, `null`), never as a Python repr."""
    return json.dumps(value, ensure_ascii=False, default=str)[:120]


def verify(expected: Iterable[FacadeFile], installed: dict[str, str], owner: str) -> list[Finding]:
    """Every expected file present in `installed` (keyed `<base>/<path>`), and sound."""
    findings: list[Finding] = []
    for f in expected:
        text = installed.get(f.key)
        if text is None:
            findings.append(Finding(f.key, "missing"))
            continue
        findings += [Finding(f.key, problem) for problem in problems(f, text, owner)]
    return findings
