"""Merges into shared files: only LoopX's keys (JSON, TOML) or its marked block (Markdown) change.

`merge` adds LoopX's fragment to a file's text; `unmerge` takes exactly that back out.
Comments, order and foreign keys stay (tomlkit for TOML; insertion-ordered JSON).
"""

from __future__ import annotations

import json
from typing import Any

from loopx_core.errors import ConflictError

ARRAY = "[]"
Keys = tuple[tuple[str, ...], ...]


def _walk(doc: Any, path: tuple[str, ...], create: bool, factory: Any) -> Any:
    node = doc
    for key in path:
        if key not in node:
            if not create:
                return None
            node[key] = factory()
        node = node[key]
    return node


def _deep_set(target: Any, value: Any) -> None:
    """Set every leaf of `value` into the mapping `target`, keeping keys `value` lacks."""
    for key, item in value.items():
        if isinstance(item, dict) and key in target and hasattr(target[key], "items"):
            _deep_set(target[key], item)
        else:
            target[key] = item


def _deep_unset(target: Any, value: Any) -> None:
    """Remove the leaves of `value` from `target`; drop mappings left empty."""
    for key, item in value.items():
        if key not in target:
            continue
        if isinstance(item, dict) and hasattr(target[key], "items"):
            _deep_unset(target[key], item)
            if not target[key]:
                del target[key]
        else:
            del target[key]


def _apply(doc: Any, fragment: Any, keys: Keys, factory: Any, add: bool) -> None:
    for path in keys:
        is_array = path[-1] == ARRAY
        where = path[:-1] if is_array else path
        value = _walk(fragment, where, False, factory)
        if value is None:
            raise ValueError(f"fragment has no value at {'.'.join(where)}")
        if is_array:
            parent = _walk(doc, where[:-1], add, factory)
            if parent is None:
                continue
            if add:
                items = parent.setdefault(where[-1], [])
                items.extend(v for v in value if v not in items)
            elif where[-1] in parent:
                kept = [v for v in parent[where[-1]] if v not in value]
                if kept:
                    parent[where[-1]] = kept
                else:
                    del parent[where[-1]]
        else:
            parent = _walk(doc, where[:-1], add, factory)
            if parent is None:
                continue
            if add:
                if where[-1] in parent and hasattr(parent[where[-1]], "items") and isinstance(value, dict):
                    _deep_set(parent[where[-1]], value)
                else:
                    parent[where[-1]] = value
            elif where[-1] in parent:
                if hasattr(parent[where[-1]], "items") and isinstance(value, dict):
                    _deep_unset(parent[where[-1]], value)
                    if not parent[where[-1]]:
                        del parent[where[-1]]
                else:
                    del parent[where[-1]]
        if not add:
            _prune(doc, where[:-1])


def _prune(doc: Any, path: tuple[str, ...]) -> None:
    """Drop mappings on `path` that the removal left empty (deepest first)."""
    for depth in range(len(path), 0, -1):
        parent = _walk(doc, path[: depth - 1], False, dict)
        key = path[depth - 1]
        if parent is not None and key in parent and hasattr(parent[key], "items") and not parent[key]:
            del parent[key]


# -- JSON ----------------------------------------------------------------------------------
def _load_json(text: str, what: str) -> dict[str, Any]:
    try:
        doc = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        raise ConflictError(f"{what} is not valid JSON ({exc.msg}); left unchanged") from None
    if not isinstance(doc, dict):
        raise ConflictError(f"{what} is not a JSON object; left unchanged")
    return doc


def _dump_json(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def merge_json(current: str | None, fragment: str, keys: Keys, what: str) -> str:
    """`current` with the fragment's owned keys set."""
    doc = _load_json(current or "", what)
    _apply(doc, json.loads(fragment), keys, dict, add=True)
    return _dump_json(doc)


def unmerge_json(current: str, fragment: str, keys: Keys, what: str) -> str | None:
    """`current` without the fragment's owned keys (None: nothing of the file is left)."""
    doc = _load_json(current, what)
    _apply(doc, json.loads(fragment), keys, dict, add=False)
    return _dump_json(doc) if doc else None


def has_json(current: str, fragment: str, keys: Keys) -> bool:
    """True when every owned key of the fragment is present with its value."""
    try:
        doc = json.loads(current)
    except ValueError:
        return False
    return merge_json(current, fragment, keys, "file") == _dump_json(doc)


# -- TOML ----------------------------------------------------------------------------------
def _load_toml(text: str, what: str) -> Any:
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        return tomlkit.parse(text)
    except TOMLKitError as exc:
        raise ConflictError(f"{what} is not valid TOML ({exc}); left unchanged") from None


def _toml_table() -> Any:
    import tomlkit

    return tomlkit.table(is_super_table=True)


def merge_toml(current: str | None, fragment: str, keys: Keys, what: str) -> str:
    """`current` with the fragment's owned tables/keys set; comments and foreign keys kept."""
    import tomlkit

    doc = _load_toml(current or "", what)
    if all(_walk(doc.unwrap(), path, False, dict) is None for path in keys):
        # none of our tables exist yet: append the fragment as written, after a blank line
        text = (current or "").rstrip("\n")
        return (text + "\n\n" if text else "") + fragment.rstrip("\n") + "\n"
    _apply(doc, tomlkit.parse(fragment).unwrap(), keys, _toml_table, add=True)
    text = tomlkit.dumps(doc)
    return text if text.endswith("\n") or not text else text + "\n"


def unmerge_toml(current: str, fragment: str, keys: Keys, what: str) -> str | None:
    """`current` without the fragment's owned keys (None: nothing is left)."""
    import tomlkit

    doc = _load_toml(current, what)
    _apply(doc, tomlkit.parse(fragment).unwrap(), keys, _toml_table, add=False)
    text = tomlkit.dumps(doc)
    return text.rstrip("\n") + "\n" if text.strip() else None  # drop the blank line merge added


def has_toml(current: str, fragment: str, keys: Keys) -> bool:
    """True when every owned key of the fragment is present with its value."""
    try:
        return merge_toml(current, fragment, keys, "file") == current
    except ConflictError:
        return False


# -- Markdown -----------------------------------------------------------------------------
def _markers(owner: str) -> tuple[str, str]:
    return f"<!-- loopx:begin {owner} -->", f"<!-- loopx:end {owner} -->"


def _find(text: str, owner: str) -> tuple[int, int] | None:
    begin, end = _markers(owner)
    start = text.find(begin)
    if start < 0:
        return None
    stop = text.find(end, start)
    if stop < 0:
        return None
    stop += len(end)
    if text[stop : stop + 1] == "\n":
        stop += 1
    return start, stop


def merge_markdown(current: str | None, block: str, owner: str) -> str:
    """`current` with LoopX's marked block for `owner` replaced, or appended after a blank line."""
    begin, end = _markers(owner)
    body = f"{begin}\n{block.rstrip()}\n{end}\n"
    text = current or ""
    span = _find(text, owner)
    if span is not None:
        return text[: span[0]] + body + text[span[1] :]
    if not text:
        return body
    return text + "\n" + body  # one newline, always: unmerge can take exactly it back


def unmerge_markdown(current: str, owner: str) -> str | None:
    """`current` without the marked block (and the blank line that introduced it)."""
    span = _find(current, owner)
    if span is None:
        return current
    before, after = current[: span[0]], current[span[1] :]
    if before.endswith("\n"):
        before = before[:-1]  # the newline merge put before the block
    text = before + after
    return text if text.strip() else None


def has_markdown(current: str, block: str, owner: str) -> bool:
    """True when the marked block is present with this body."""
    return merge_markdown(current, block, owner) == current
