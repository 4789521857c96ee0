"""`loopx mcp serve`: the LoopX tools over MCP on stdio."""

from __future__ import annotations

import typer

app = typer.Typer(add_completion=False, help="The LoopX MCP server.", no_args_is_help=True)


@app.callback()
def mcp() -> None:
    """The LoopX MCP server."""


@app.command("serve")
def serve(ctx: typer.Context) -> None:
    """Serve the LoopX tools over MCP on stdio (should-run, todos, turns, writeback, spend, journal, status)."""
    from loopx_core.mcp import serve as serve_stdio

    serve_stdio((ctx.find_root().obj or {}).get("root"))
