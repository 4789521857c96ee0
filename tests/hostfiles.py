"""Host config files as users have them before LoopX arrives (comments, other servers, their hooks)."""

from __future__ import annotations

USER_TOML = """# my codex config
model = "gpt-5"  # the default model

[mcp_servers.github]
command = "gh-mcp"
args = ["serve"]

[mcp_servers.github.tools.search]
approval_mode = "approve"

[profiles.fast]
model_reasoning_effort = "low"
unknown_key = { nested = true }
"""

SETTINGS = {
    "permissions": {"allow": ["Bash(npm test)"]},
    "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "my-linter"}]}]},
    "model": "opus",
}
