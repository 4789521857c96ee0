"""Kills the survivors of `make mutate MODULES=installer/loopx_installer/merge.py` (docs/testing.md).

The suite's merges own keys two levels deep and arrays the user had not started: here a key
three levels deep, one at the top, and an array the user already holds elements in, in JSON
and TOML, each merged and taken out again.
"""

from __future__ import annotations

import json
import tomllib

import pytest

from loopx_core.errors import ConflictError
from loopx_installer import merge

DEEP = '{"a": {"b": {"loopx": {"command": "loopx"}}}}'
DEEP_KEYS = (("a", "b", "loopx"),)


@pytest.mark.parametrize(
    ("fragment", "keys", "user"),
    [
        (DEEP, DEEP_KEYS, {"a": {"b": {"theirs": 1}, "c": 2}}),
        ('{"loopx": true}', (("loopx",),), {"theirs": 1}),
    ],
)
def test_a_key_at_any_depth_goes_in_and_comes_out_alone(
    fragment: str, keys: tuple[tuple[str, ...], ...], user: dict[str, object]
) -> None:
    original = json.dumps(user, indent=2) + "\n"
    merged = merge.merge_json(original, fragment, keys, "settings.json")
    assert json.loads(merged) != user
    assert merge.unmerge_json(merged, fragment, keys, "settings.json") == original


def test_an_array_the_user_fills_takes_loopx_s_element_after_theirs_in_toml() -> None:
    user = '# mine\n[tools]\nallowed = ["git"]\n'
    fragment = '[tools]\nallowed = ["loopx"]\n'
    keys = (("tools", "allowed", "[]"),)
    merged = merge.merge_toml(user, fragment, keys, "config.toml")
    assert tomllib.loads(merged) == {"tools": {"allowed": ["git", "loopx"]}}
    assert merged.startswith("# mine\n")
    assert merge.unmerge_toml(merged, fragment, keys, "config.toml") == user


def test_an_element_loopx_already_put_in_an_array_is_named_as_an_array_entry() -> None:
    keys = (("tools", "allowed", "[]"), ("mcp", "loopx"))
    fragment = merge.Fragment('[tools]\nallowed = ["loopx"]\n[mcp.loopx]\ncommand = "loopx"\n', keys)
    current = '[tools]\nallowed = ["git", "loopx"]\n[mcp.loopx]\ncommand = "old"\n'
    assert merge.foreign_owned("toml", current, fragment, "config.toml", "codex-app") == [
        "tools.allowed[]",
        "mcp.loopx",
    ]


@pytest.mark.parametrize("kind", ["json", "toml"])
def test_a_loopx_key_holding_another_value_is_not_loopx_s(kind: str) -> None:
    texts = {
        "json": ('{"mcp": {"loopx": {"command": "%s"}}}', "{}"),
        "toml": ('[mcp.loopx]\ncommand = "%s"\n', ""),
    }
    template, _ = texts[kind]
    fragment = merge.Fragment(template % "loopx", (("mcp", "loopx"),))
    assert merge.has(kind, template % "loopx", fragment, "host")
    assert not merge.has(kind, template % "old", fragment, "host")


def test_a_list_of_loopx_s_is_not_the_same_as_the_user_s_plain_value() -> None:
    fragment = merge.Fragment('{"mcp": {"loopx": {"args": ["serve"]}}}', (("mcp", "loopx"),))
    assert merge.has("json", '{"mcp": {"loopx": {"args": ["serve"]}}}', fragment, "host")
    assert not merge.has(
        "json",
        '{"mcp": {"loopx": {"args": "s"}}}',
        merge.Fragment('{"mcp": {"loopx": {"args": ["s"]}}}', (("mcp", "loopx"),)),
        "host",
    )


def test_a_marked_block_is_rewritten_in_place_and_taken_out_at_uninstall() -> None:
    user = "# Rules\n\nBe kind.\n"
    block = merge.Fragment("Use the `loopx` skill.", ())
    installed = merge.rewrite("markdown", user, None, block, "AGENTS.md", "codex-app")
    assert installed is not None and "<!-- loopx:begin codex-app -->" in installed
    newer = merge.Fragment("Use the `loopx` skill, always.", ())
    updated = merge.rewrite("markdown", installed, block, newer, "AGENTS.md", "codex-app")
    assert updated is not None and "always" in updated and updated.count("loopx:begin") == 1
    assert merge.rewrite("markdown", updated, newer, None, "AGENTS.md", "codex-app") == user
    assert merge.rewrite("markdown", None, block, None, "AGENTS.md", "codex-app") is None


def test_a_merge_that_would_leave_invalid_text_is_refused_naming_the_file_and_kind() -> None:
    with pytest.raises(ConflictError) as caught:
        merge._checked("toml", "[broken", {}, "config.toml")
    assert str(caught.value) == "config.toml: merging would leave invalid TOML; left unchanged"
