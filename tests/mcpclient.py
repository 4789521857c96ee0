"""An MCP client for tests: the SDK's own stdio client against a real `loopx mcp serve`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.conftest import LOOPX_BIN

TOOLS = {  # every tool the server must list
    "quota_should_run",
    "todo_list",
    "todo_claim",
    "todo_complete",
    "turn_begin",
    "writeback",
    "quota_spend",
    "turn_renew",
    "turn_inspect_journal",
    "status",
    "todo_add",
    "todo_update",
    "turn_cancel",
    "focus_wait",
    "focus_poll",
    "focus_done",
    "gate_open",
    "gate_resolve",
    "history",
}


class Tools:
    """A thin caller: structured results for successes, the typed error object for refusals."""

    def __init__(self, session: ClientSession) -> None:
        self.session = session

    async def __call__(self, name: str, **arguments: Any) -> dict[str, Any]:
        result = await self.session.call_tool(name, arguments)
        if result.is_error:
            [content] = result.content
            return json.loads(content.text)  # type: ignore[union-attr]  # nothing but the error object
        return result.structured_content or json.loads(result.content[0].text)  # type: ignore[union-attr]


def with_server(root: Path, body) -> Any:  # type: ignore[no-untyped-def]
    """Run `body(tools)` against a real `loopx mcp serve` subprocess for `root`."""

    async def main() -> Any:
        params = StdioServerParameters(command=str(LOOPX_BIN), args=["--root", str(root), "mcp", "serve"])
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await body(session, Tools(session))

    return anyio.run(main)
