"""Merges into shared files: only LoopX's keys (JSON, TOML) or its marked block (Markdown) change.

`rewrite` takes one fragment's keys out of a file's text and/or puts another's in. Comments,
order and foreign keys stay (tomlkit for TOML; insertion-ordered JSON). Every result is read
back with a strict parser (`json` without NaN or duplicate keys, `tomllib`) and compared with
what the change should give on the parsed data: a file that would not re-parse, or would lose
or change a key LoopX does not own, is a conflict and stays as it was. So is a file whose shape
is not what the keys need (`{"mcpServers": []}`, `mcp_servers = 5`).
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any

from loopx_core.errors import ConflictError
from loopx_core.hosts import blocks

ARRAY = "[]"
Keys = tuple[tuple[str, ...], ...]
_TOMLKIT_FAILURES = (ValueError, TypeError, KeyError, AttributeError, IndexError, RecursionError)
"""What tomlkit raises on documents it cannot edit (its own errors derive from ValueError)."""


@dataclass(frozen=True)
class Fragment:
    """LoopX's part of a shared file: the rendered fragment and the key paths it owns in it."""

    text: str
    keys: Keys = ()
    created: Keys | None = None
    """Mappings and arrays the merge created (`missing`): only those are dropped again when the
    removal leaves them empty. None: drop any left empty (manifests written before this was kept)."""
    separated: bool | None = None
    """Markdown: whether the merge put a newline before the block (it appended the block to text);
    False: the block opened the file, so a newline before it now is the user's. None: not recorded."""


def _kind(value: Any) -> str:
    if isinstance(value, Mapping):
        return "a table/object"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    return f"a {type(value).__name__}"


def _child(node: Any, key: str, where: list[str], create: bool, factory: Callable[[], Any]) -> Any:
    """`node[key]` (made with `factory` when missing and `create`), refusing a non-mapping on the way."""
    if key not in node:
        if not create:
            return None
        node[key] = factory()
    value = node[key]
    if not isinstance(value, MutableMapping):
        raise ConflictError(f"{'.'.join([*where, key])} is {_kind(value)}, not a table/object")
    return value


def _parent(doc: Any, path: tuple[str, ...], create: bool, factory: Callable[[], Any]) -> Any:
    node = doc
    for depth, key in enumerate(path):
        node = _child(node, key, list(path[:depth]), create, factory)
        if node is None:
            return None
    return node


def _value(fragment: Any, path: tuple[str, ...]) -> Any:
    node = fragment
    for key in path:
        if not isinstance(node, Mapping) or key not in node:
            raise ConflictError(f"LoopX's fragment has no value at {'.'.join(path)}")
        node = node[key]
    return node


def _deep_set(target: MutableMapping[str, Any], value: Mapping[str, Any]) -> None:
    """Set every leaf of `value` into `target`, keeping keys `value` lacks."""
    for key, item in value.items():
        if isinstance(item, Mapping) and isinstance(target.get(key), MutableMapping):
            _deep_set(target[key], item)
        else:
            target[key] = copy.deepcopy(item)


def _deep_unset(target: MutableMapping[str, Any], value: Mapping[str, Any]) -> None:
    """Remove the leaves of `value` from `target`; drop mappings left empty."""
    for key, item in value.items():
        if key not in target:
            continue
        if isinstance(item, Mapping) and isinstance(target[key], MutableMapping):
            _deep_unset(target[key], item)
            if not target[key]:
                del target[key]
        else:
            del target[key]


def _add(doc: Any, fragment: Any, keys: Keys, factory: Callable[[], Any]) -> None:
    for path in keys:
        is_array = path[-1] == ARRAY
        where = path[:-1] if is_array else path
        value = _value(fragment, where)
        parent = _parent(doc, where[:-1], True, factory)
        key = where[-1]
        if is_array:
            if key not in parent:
                parent[key] = []
            items = parent[key]
            if not isinstance(items, list):
                raise ConflictError(f"{'.'.join(where)} is {_kind(items)}, not an array")
            items.extend(copy.deepcopy(v) for v in value if v not in items)
        elif isinstance(value, Mapping) and isinstance(parent.get(key), MutableMapping):
            _deep_set(parent[key], value)
        else:
            parent[key] = copy.deepcopy(value)


def _remove(doc: Any, fragment: Any, keys: Keys, created: Keys | None = None) -> None:
    for path in keys:
        is_array = path[-1] == ARRAY
        where = path[:-1] if is_array else path
        value = _value(fragment, where)
        parent = _parent(doc, where[:-1], False, dict)
        key = where[-1]
        if parent is None or key not in parent:
            continue
        if is_array:
            items = parent[key]
            if not isinstance(items, list):
                raise ConflictError(f"{'.'.join(where)} is {_kind(items)}, not an array")
            kept = [v for v in items if v not in value]
            if kept or (created is not None and where not in created):
                if len(kept) != len(items):
                    parent[key] = kept
            else:
                del parent[key]
        elif isinstance(value, Mapping) and isinstance(parent[key], MutableMapping):
            _deep_unset(parent[key], value)
            if not parent[key]:
                del parent[key]
        else:
            del parent[key]
        _prune(doc, where[:-1], created)


def _prune(doc: Any, path: tuple[str, ...], created: Keys | None) -> None:
    """Drop mappings on `path` that the removal left empty (deepest first), if the merge made them."""
    for depth in range(len(path), 0, -1):
        parent = _parent(doc, path[: depth - 1], False, dict)
        key = path[depth - 1]
        made = created is None or path[:depth] in created
        if made and parent is not None and isinstance(parent.get(key), Mapping) and not parent[key]:
            del parent[key]


def missing(kind: str, current: str | None, add: Fragment, what: str) -> Keys:
    """The mappings and arrays on the way to the owned keys that `current` lacks (the merge makes them)."""
    if kind not in ("json", "toml"):
        return ()
    data = strict(kind, current or "", what)
    found: list[tuple[str, ...]] = []
    for path in add.keys:
        where = path[:-1] if path[-1] == ARRAY else path
        stop = len(where) if path[-1] == ARRAY else len(where) - 1
        node: Any = data
        for depth in range(stop):
            key = where[depth]
            if not isinstance(node, Mapping) or key not in node:
                found += [where[: d + 1] for d in range(depth, stop) if where[: d + 1] not in found]
                break
            node = node[key]
    return tuple(found)


def present(doc: Any, fragment: Any, keys: Keys) -> list[str]:
    """The owned key paths (dotted) that already hold something in `doc`: LoopX's array elements
    already in their array, or any value at an owned key."""
    found = []
    for path in keys:
        is_array = path[-1] == ARRAY
        where = path[:-1] if is_array else path
        parent = _parent(doc, where[:-1], False, dict)
        if parent is None or where[-1] not in parent:
            continue
        if not is_array:
            found.append(".".join(where))
        elif isinstance(parent[where[-1]], list) and any(
            v in parent[where[-1]] for v in _value(fragment, where)
        ):
            found.append(".".join(where) + "[]")
    return found


def _same(a: Any, b: Any) -> bool:
    """Equal data, NaN equal to NaN (TOML has nan), dict order ignored, types compared."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


# -- strict readers -------------------------------------------------------------------------
def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise ValueError(f"duplicate key {key[:40]!r}")
        found[key] = value
    return found


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def strict_json(text: str, what: str) -> dict[str, Any]:
    """A JSON object, read strictly (no NaN/Infinity, no duplicate keys); ConflictError otherwise."""
    try:
        doc = (
            json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
            if text.strip()
            else {}
        )
    except json.JSONDecodeError as exc:
        raise ConflictError(f"{what} is not valid JSON ({exc.msg}); left unchanged") from None
    except (ValueError, RecursionError) as exc:
        reason = str(exc) if isinstance(exc, ValueError) else "nested too deeply"
        raise ConflictError(f"{what} is not valid JSON ({reason}); left unchanged") from None
    if not isinstance(doc, dict):
        raise ConflictError(f"{what} is {_kind(doc)}, not a JSON object; left unchanged")
    return doc


def strict_toml(text: str, what: str) -> dict[str, Any]:
    """A TOML document, read by `tomllib`; ConflictError otherwise."""
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConflictError(f"{what} is not valid TOML ({exc}); left unchanged") from None
    except (RecursionError, ValueError):
        raise ConflictError(f"{what} is not valid TOML (nested too deeply); left unchanged") from None


def strict(kind: str, text: str, what: str) -> dict[str, Any]:
    """The file's data read with the strict parser of its kind."""
    if kind == "json":
        return strict_json(text, what)
    if kind == "toml":
        return strict_toml(text, what)
    raise ValueError(f"not a merged file kind: {kind!r}")


def _fragment(kind: str, fragment: Fragment) -> dict[str, Any]:
    return strict(kind, fragment.text, "LoopX's fragment")


def expected(
    kind: str, current: str | None, remove: Fragment | None, add: Fragment | None, what: str
) -> dict[str, Any]:
    """What the file's data must be after the change, computed on plain parsed data."""
    data = strict(kind, current or "", what)
    if remove is not None:
        _remove(data, _fragment(kind, remove), remove.keys, remove.created)
    if add is not None:
        _add(data, _fragment(kind, add), add.keys, dict)
    return data


def _checked(kind: str, text: str | None, want: dict[str, Any], what: str) -> str | None:
    """`text` if it re-parses strictly to `want`; ConflictError otherwise."""
    try:
        got = strict(kind, text or "", what) if text is not None else {}
    except ConflictError:
        raise ConflictError(f"{what}: merging would leave invalid {kind.upper()}; left unchanged") from None
    if not _same(got, want):
        raise ConflictError(f"{what}: merging would change keys LoopX does not own; left unchanged")
    return text


# -- JSON ----------------------------------------------------------------------------------
def _dump_json(doc: dict[str, Any], what: str) -> str:
    text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ConflictError(f"{what} holds text that is not valid Unicode; left unchanged") from None
    return text


def _rewrite_json(
    current: str | None, remove: Fragment | None, add: Fragment | None, what: str
) -> str | None:
    want = expected("json", current, remove, add, what)
    doc = strict_json(current or "", what)
    if remove is not None:
        _remove(doc, _fragment("json", remove), remove.keys, remove.created)
    if add is not None:
        _add(doc, _fragment("json", add), add.keys, dict)
    return _checked("json", _dump_json(doc, what) if doc else None, want, what)


# -- TOML ----------------------------------------------------------------------------------
def _toml_table() -> Any:
    import tomlkit

    return tomlkit.table(is_super_table=True)


def _toml_doc(text: str, what: str) -> Any:
    import tomlkit

    try:
        return tomlkit.parse(text)
    except _TOMLKIT_FAILURES as exc:
        raise ConflictError(f"{what} is not valid TOML ({str(exc)[:120]}); left unchanged") from None


def _append(current: str | None, add: Fragment) -> str:
    text = (current or "").rstrip("\n")
    return (text + "\n\n" if text else "") + add.text.rstrip("\n") + "\n"


def _rewrite_toml(
    current: str | None, remove: Fragment | None, add: Fragment | None, what: str
) -> str | None:
    import tomlkit

    want = expected("toml", current, remove, add, what)
    doc = _toml_doc(current or "", what)
    try:
        if remove is not None:
            _remove(doc, _fragment("toml", remove), remove.keys, remove.created)
        base = tomlkit.dumps(doc)
        if add is not None and not present(doc.unwrap(), _fragment("toml", add), add.keys):
            # none of our keys exist: append the fragment as written (the user's text stays as it is)
            try:
                return _checked("toml", _append(base if remove is not None else current, add), want, what)
            except ConflictError:
                pass  # e.g. an inline `mcp_servers = {...}` cannot take a [mcp_servers.loopx] header
        if add is not None:
            _add(doc, _fragment("toml", add), add.keys, _toml_table)
        text = tomlkit.dumps(doc)
    except ConflictError:
        raise
    except _TOMLKIT_FAILURES as exc:
        raise ConflictError(f"{what} cannot be merged safely ({str(exc)[:120]}); left unchanged") from None
    if add is None:
        text = text.rstrip("\n") + "\n" if text.strip() else ""  # drop the blank line merge added
    elif not text.endswith("\n"):
        text += "\n"
    return _checked("toml", text if text.strip() else None, want, what)


# -- Markdown -----------------------------------------------------------------------------
# The marked-block format lives in the core (`loopx_core.hosts.blocks`): hosts read it back too.
merge_markdown = blocks.merge


def unmerge_markdown(current: str, owner: str, separated: bool | None = None) -> str | None:
    """`current` without `owner`'s block, and without the newline before it only when the merge
    put it there (`separated` not False); None when nothing is left. ConflictError for a damaged block.
    """
    blocks.unmerge(current, owner)  # refuses a damaged block
    found = blocks.span(current, owner)
    if found is None:
        return current
    before, after = current[: found[0]], current[found[1] :]
    if separated is not False and before.endswith("\n"):
        before = before[:-1]
    return before + after or None


def markdown_separated(current: str | None, owner: str) -> bool | None:
    """Whether merging the block into `current` puts a newline before it (None: the block is
    already there and is replaced in place, so what was recorded for it still holds)."""
    if current and blocks.span(current, owner) is not None:
        return None
    return bool(current)


def has_markdown(current: str, block: str, owner: str) -> bool:
    """True when the marked block is present with this body (False for a damaged block: drift)."""
    try:
        return merge_markdown(current, block, owner) == current
    except ConflictError:
        return False


# -- one entry point per operation ------------------------------------------------------------
def rewrite(
    kind: str, current: str | None, remove: Fragment | None, add: Fragment | None, what: str, owner: str
) -> str | None:
    """The file after taking `remove`'s keys out and putting `add`'s in (None: nothing is left).

    ConflictError when the file cannot take the change safely.
    """
    if kind == "markdown":
        if add is not None:  # the block is replaced where it is (or appended): nothing to take out first
            return merge_markdown(current, add.text, owner)
        if remove is not None and current is not None:
            return unmerge_markdown(current, owner, remove.separated)
        return current
    if kind == "json":
        return _rewrite_json(current, remove, add, what)
    if kind == "toml":
        return _rewrite_toml(current, remove, add, what)
    raise ValueError(f"not a merged file kind: {kind!r}")


def foreign_owned(kind: str, current: str | None, add: Fragment, what: str, owner: str) -> list[str]:
    """Owned keys that already hold something LoopX did not write (before LoopX owns the file)."""
    if current is None:
        return []
    if kind == "markdown":
        return [f"the LoopX block for {owner}"] if blocks.span(current, owner) is not None else []
    return present(strict(kind, current, what), _fragment(kind, add), add.keys)


def has(kind: str, current: str, add: Fragment, owner: str) -> bool:
    """True when every owned key of the fragment is present with its value."""
    if kind == "markdown":
        return has_markdown(current, add.text, owner)
    try:
        data = strict(kind, current, "file")
        return _same(data, expected(kind, current, None, add, "file"))
    except ConflictError:
        return False


def merge_json(current: str | None, fragment: str, keys: Keys, what: str) -> str:
    """`current` with the fragment's owned keys set."""
    return rewrite("json", current, None, Fragment(fragment, keys), what, "") or ""


def unmerge_json(current: str, fragment: str, keys: Keys, what: str) -> str | None:
    """`current` without the fragment's owned keys (None: nothing of the file is left)."""
    return rewrite("json", current, Fragment(fragment, keys), None, what, "")


def merge_toml(current: str | None, fragment: str, keys: Keys, what: str) -> str:
    """`current` with the fragment's owned tables/keys set; comments and foreign keys kept."""
    return rewrite("toml", current, None, Fragment(fragment, keys), what, "") or ""


def unmerge_toml(current: str, fragment: str, keys: Keys, what: str) -> str | None:
    """`current` without the fragment's owned keys (None: nothing is left)."""
    return rewrite("toml", current, Fragment(fragment, keys), None, what, "")
