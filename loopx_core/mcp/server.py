"""The MCP server object: the LoopX tools on the SDK's `MCPServer`, with strict arguments and typed errors.

Two SDK hooks, both at the level where the SDK decides:

- arguments: the SDK validates a call against a pydantic model generated from the tool's
  signature; each tool's model is replaced by a strict subclass (unknown arguments, wrong
  types, NaN and infinities refused), and the published input schema regenerated from it;
- answers: `MCPServer.call_tool` is where every tool failure surfaces as the SDK's `ToolError`;
  the override turns each into LoopX's JSON error object (argument errors are `usage`, a
  LoopX error keeps its code, anything else is `internal`) before the SDK would log it or
  answer with its own text.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.mcpserver.tools import Tool
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, InputRequiredResult, TextContent
from pydantic import BaseModel, ConfigDict, ValidationError

from loopx_core.errors import LoopxError
from loopx_core.mcp import answers
from loopx_core.mcp.tools import INSTRUCTIONS, loopx_tools
from loopx_core.store.base import Store
from loopx_core.store.choice import open_store
from loopx_core.store.roots import find_root

SERVER_NAME = "loopx"
STRICT_ARGUMENTS = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)


def strict_tool(fn: Callable[..., Any]) -> Tool:
    """The SDK's tool for `fn`, with its argument model made strict and its schema regenerated."""
    tool = Tool.from_function(fn, name=fn.__name__)
    loose: type[BaseModel] = tool.fn_metadata.arg_model

    class Strict(loose):  # type: ignore[valid-type,misc]
        model_config = ConfigDict(**STRICT_ARGUMENTS, title=loose.__name__)

    Strict.__name__ = Strict.__qualname__ = loose.__name__
    tool.fn_metadata.arg_model = Strict
    tool.parameters = Strict.model_json_schema(by_alias=True)
    return tool


class LoopxServer(MCPServer[Any]):
    """`MCPServer` whose every tool failure is answered with LoopX's typed JSON error object."""

    def __init__(self, tools: list[Tool], roots: Callable[[], list[Path]], **settings: Any) -> None:
        super().__init__(SERVER_NAME, tools=tools, **settings)
        self._arguments = {t.name: list(t.fn_metadata.arg_model.model_fields) for t in tools}
        # Free text: the arguments that are not ids (an id's own pattern bounds it, and says so).
        self._free_text = {
            t.name: {
                n for n, schema in t.parameters["properties"].items() if '"pattern"' not in json.dumps(schema)
            }
            for t in tools
        }
        self._roots = roots

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Any = None
    ) -> CallToolResult | InputRequiredResult:
        """Call a tool; a failure of any kind becomes an error result carrying the typed error."""
        if name not in self._arguments:
            return self.refusal(answers.unknown_tool(name, self._arguments))
        # Before the SDK's own validation: a lone surrogate passes it (a str is a str) and then
        # fails deep inside a tool, when its answer or a file is written; a NUL would be stored.
        if found := answers.unsendable(arguments):
            return self.refusal(answers.not_text(name, *found, self._arguments[name]))
        free = {k: v for k, v in arguments.items() if k in self._free_text[name]}
        if refused := answers.too_long(name, free, self._arguments[name]):
            return self.refusal(refused)  # a 20 MB title would be stored, and echoed back whole
        try:
            return await super().call_tool(name, arguments, context)
        except MCPError:
            raise
        except ToolError as failure:
            return self.refusal(self._typed(name, failure), self._arguments[name])

    def _typed(self, name: str, failure: ToolError) -> LoopxError:
        cause = failure.__cause__
        if isinstance(cause, LoopxError):
            return cause
        if isinstance(cause, ValidationError) and not isinstance(failure, UnexpectedToolError):
            return answers.bad_arguments(name, cause, self._arguments[name])
        # One line, the exception's type only: its text may carry local paths or caller data.
        sys.stderr.write(f"loopx mcp: internal error in tool {name}: {type(cause or failure).__name__}\n")
        return answers.internal(name)

    def refusal(self, error: LoopxError, arguments: list[str] | None = None) -> CallToolResult:
        """The error result whose only content is the JSON error object (options named as `arguments`)."""
        try:
            roots = self._roots()
        except Exception:  # a root that cannot be found must not hide the refusal itself
            roots = []
        return CallToolResult(
            content=[TextContent(type="text", text=answers.error_text(error, roots, arguments or ()))],
            is_error=True,
        )

    async def run_stdio_async(self) -> None:
        """Serve on stdio, answering a malformed JSON-RPC line with a JSON-RPC error."""
        from loopx_core.mcp.transport import serve_stdio

        # The SDK's own stdio runner is this call with the SDK's stdin reader; only stdin differs.
        await serve_stdio(self._lowlevel_server)


def build_server(root: str | None = None) -> LoopxServer:
    """The MCP server with every LoopX tool registered."""
    from loopx_core import __version__

    def store() -> Store:
        return open_store(find_root(root), shared=True)  # one pooled PostgreSQL store per process

    def roots() -> list[Path]:
        return [find_root(root)]

    return LoopxServer(
        [strict_tool(fn) for fn in loopx_tools(store)],
        roots,
        version=__version__,
        instructions=INSTRUCTIONS,
        log_level="WARNING",
    )
