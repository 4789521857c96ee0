"""Keys of an owned file that the host itself edits (`FacadeFile.host_keys`).

A Codex automation's `rrule`, `status` and `updated_at` are rewritten by the App (LoopX's own
heartbeat prompt asks it to change the rrule). Those values belong to the host: the file's
fingerprint leaves them out, so a host edit is neither drift nor a conflict, and a re-install
keeps the host's values instead of resetting them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from loopx_installer.manifest import sha256

_FAILURES = (ValueError, TypeError, KeyError, AttributeError, IndexError, RecursionError)


def _format(rel: str) -> str | None:
    if rel.endswith(".toml"):
        return "toml"
    if rel.endswith(".json"):
        return "json"
    return None


def _load(kind: str, text: str) -> Any:
    if kind == "toml":
        import tomlkit

        return tomlkit.parse(text)
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("not an object")
    return data


def _dump(kind: str, doc: Any) -> str:
    if kind == "toml":
        import tomlkit

        return tomlkit.dumps(doc)
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def core(text: str, rel: str, keys: Iterable[str]) -> str:
    """The text without the host's keys (the text itself when there are none, or it does not parse)."""
    keys = tuple(keys)
    kind = _format(rel)
    if not keys or kind is None:
        return text
    try:
        doc = _load(kind, text)
        for key in keys:
            doc.pop(key, None)
        return _dump(kind, doc)
    except _FAILURES:
        return text


def fingerprint(text: str | None, rel: str, keys: Iterable[str]) -> str | None:
    """The sha256 LoopX records for an owned file: of its text without the host's keys."""
    return None if text is None else sha256(core(text, rel, keys))


def adopt(rendered: str, current: str | None, rel: str, keys: Iterable[str]) -> str:
    """`rendered` carrying the host's current values of its keys (as they are in `current`)."""
    keys = tuple(keys)
    kind = _format(rel)
    if not keys or kind is None or current is None:
        return rendered
    try:
        doc, have = _load(kind, rendered), _load(kind, current)
        changed = False
        for key in keys:
            if key in have and key in doc and have[key] != doc[key]:
                doc[key] = have[key]
                changed = True
        return _dump(kind, doc) if changed else rendered
    except _FAILURES:
        return rendered
