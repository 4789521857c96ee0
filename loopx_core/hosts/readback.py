"""Helpers for `loopx_verify_installation`: read installed files back against the rendering."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterable

from loopx_core.hosts.model import FacadeFile, Finding


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


def verify_against(
    expected: Iterable[FacadeFile], installed: dict[str, str], check: Callable[[FacadeFile, str], list[str]]
) -> list[Finding]:
    """Every expected file present (`installed` maps "base/path" to text), then `check` on each."""
    findings: list[Finding] = []
    for f in expected:
        where = f"{f.base}/{f.path}"
        text = installed.get(where)
        if text is None:
            findings.append(Finding(where, "missing"))
            continue
        findings += [Finding(where, problem) for problem in check(f, text)]
    return findings
