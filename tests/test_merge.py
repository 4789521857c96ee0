"""Merges into shared files: only LoopX's keys or block change; unmerge gives the file back."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopx_core.errors import ConflictError
from loopx_installer import merge
from tests.hostfiles import SETTINGS, USER_TOML

FRAGMENT_TOML = """[mcp_servers.loopx]
command = "loopx"
args = ["mcp", "serve"]
"""
TOML_KEYS = (("mcp_servers", "loopx"),)


def test_toml_round_trip_keeps_everything_else() -> None:
    merged = merge.merge_toml(USER_TOML, FRAGMENT_TOML, TOML_KEYS, "config.toml")
    assert merged == USER_TOML + "\n" + FRAGMENT_TOML  # the user's text untouched, ours appended
    import tomllib

    data = tomllib.loads(merged)
    assert data["mcp_servers"]["loopx"] == {"command": "loopx", "args": ["mcp", "serve"]}
    assert data["mcp_servers"]["github"]["tools"]["search"]["approval_mode"] == "approve"
    assert merge.merge_toml(merged, FRAGMENT_TOML, TOML_KEYS, "config.toml") == merged  # idempotent
    assert merge.has("toml", merged, merge.Fragment(FRAGMENT_TOML, TOML_KEYS), "codex-app")
    assert merge.unmerge_toml(merged, FRAGMENT_TOML, TOML_KEYS, "config.toml") == USER_TOML


def test_toml_keeps_user_approvals_of_our_own_tools() -> None:
    with_approval = (
        USER_TOML
        + '\n[mcp_servers.loopx]\ncommand = "old"\n\n[mcp_servers.loopx.tools.quota_should_run]\napproval_mode = "approve"\n'
    )
    merged = merge.merge_toml(with_approval, FRAGMENT_TOML, TOML_KEYS, "config.toml")
    import tomllib

    ours = tomllib.loads(merged)["mcp_servers"]["loopx"]
    assert ours["command"] == "loopx" and ours["tools"]["quota_should_run"]["approval_mode"] == "approve"
    removed = tomllib.loads(merge.unmerge_toml(merged, FRAGMENT_TOML, TOML_KEYS, "config.toml") or "")
    assert removed["mcp_servers"]["loopx"] == {"tools": {"quota_should_run": {"approval_mode": "approve"}}}


def test_invalid_toml_is_a_conflict() -> None:
    with pytest.raises(ConflictError, match="not valid TOML"):
        merge.merge_toml("[broken", FRAGMENT_TOML, TOML_KEYS, "config.toml")


HOOK_FRAGMENT = json.dumps(
    {
        "hooks": {
            "SessionStart": [{"hooks": [{"type": "command", "command": "loopx hook claude-session-start"}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "loopx hook claude-stop", "timeout": 30}]}],
        }
    }
)
HOOK_KEYS = (("hooks", "SessionStart", "[]"), ("hooks", "Stop", "[]"))


def test_json_array_elements_are_owned_not_the_array() -> None:
    original = json.dumps(SETTINGS, indent=2) + "\n"
    merged = merge.merge_json(original, HOOK_FRAGMENT, HOOK_KEYS, "settings.json")
    data = json.loads(merged)
    assert [h["hooks"][0]["command"] for h in data["hooks"]["Stop"]] == [
        "my-linter",
        "loopx hook claude-stop",
    ]
    assert list(data) == ["permissions", "hooks", "model"]  # order kept
    assert merge.merge_json(merged, HOOK_FRAGMENT, HOOK_KEYS, "settings.json") == merged
    assert merge.unmerge_json(merged, HOOK_FRAGMENT, HOOK_KEYS, "settings.json") == original


def test_json_object_key() -> None:
    original = '{\n  "mcpServers": {\n    "github": {\n      "command": "gh"\n    }\n  }\n}\n'
    fragment = '{"mcpServers": {"loopx": {"command": "loopx", "args": ["mcp", "serve"]}}}'
    merged = merge.merge_json(original, fragment, (("mcpServers", "loopx"),), ".mcp.json")
    assert list(json.loads(merged)["mcpServers"]) == ["github", "loopx"]
    assert merge.unmerge_json(merged, fragment, (("mcpServers", "loopx"),), ".mcp.json") == original
    assert (
        merge.unmerge_json(
            merge.merge_json(None, fragment, (("mcpServers", "loopx"),), "x"),
            fragment,
            (("mcpServers", "loopx"),),
            "x",
        )
        is None
    )


@pytest.mark.parametrize("bad", ["[1, 2]", "{not json", '"text"'])
def test_bad_json_is_a_conflict(bad: str) -> None:
    with pytest.raises(ConflictError):
        merge.merge_json(bad, HOOK_FRAGMENT, HOOK_KEYS, "settings.json")


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200))
def test_markdown_block_round_trip(user_text: str) -> None:
    """Whatever the user wrote, merge then unmerge gives it back exactly (or no file if it was empty)."""
    merged = merge.merge_markdown(user_text or None, "Use the `loopx` skill.", "codex-app")
    assert "<!-- loopx:begin codex-app -->" in merged
    assert merge.merge_markdown(merged, "Use the `loopx` skill.", "codex-app") == merged
    back = merge.unmerge_markdown(merged, "codex-app")
    if user_text.strip():
        assert back == user_text
    else:
        assert back is None or not back.strip()


def test_markdown_blocks_of_two_hosts_are_independent() -> None:
    text = "# My project\n\nOur rules.\n"
    both = merge.merge_markdown(merge.merge_markdown(text, "codex", "codex-app"), "dsh", "dsh")
    assert merge.unmerge_markdown(merge.unmerge_markdown(both, "codex-app") or "", "dsh") == text
