"""The built-in LoopX host plugin for the Codex App (skill, MCP server table, heartbeat automation)."""
