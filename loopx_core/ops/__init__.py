"""Operations: every state change LoopX makes, shared by the CLI and the MCP server."""
