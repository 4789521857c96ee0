"""The built-in LoopX host plugin for Claude Code (skill, status command, MCP server, hooks, plugin bundle)."""
