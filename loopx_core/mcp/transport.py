"""Stdio transport that answers every malformed JSON-RPC line, instead of dropping it.

The SDK's stdio reader turns a line it cannot parse into an exception item that its
dispatcher logs and drops, so a client that sent `{"id": 3, "method": "tools/call",
"params": "x"}` waits forever. Here stdin is read by `Lines`, which checks each line with
the SDK's own message model first: a line the SDK would drop is answered at once with a
JSON-RPC error (parse error, invalid request, or invalid params, with the request's id
when it has a usable one) and never reaches the SDK; every other line goes on unchanged.
"""

from __future__ import annotations

import json
import sys
from typing import Any, BinaryIO

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage


def refusal(line: str) -> types.JSONRPCError | None:
    """The JSON-RPC error answering `line`, or None if it is a JSON-RPC message the SDK accepts."""
    try:
        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except Exception:  # any failure of the SDK's own parse: this line would be dropped
        message = None
    if message is not None and not isinstance(message, types.JSONRPCNotification):
        return None
    try:
        data: Any = json.loads(line)
    except (ValueError, RecursionError):
        return _error(None, types.PARSE_ERROR, "Parse error: the line is not JSON")
    if message is not None and not (isinstance(data, dict) and "id" in data):
        return None  # a notification: no answer is due
    # A request whose id is unusable (true, 1.5, null) reads as a notification to the SDK,
    # which would leave its sender waiting: it is an invalid request.
    if not isinstance(data, dict):
        return _error(None, types.INVALID_REQUEST, "Invalid Request: a message must be one JSON object")
    request_id = data.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, int | str):
        request_id = None
    if (
        request_id is not None
        and data.get("jsonrpc") == "2.0"
        and isinstance(data.get("method"), str)
        and "params" in data
        and not isinstance(data["params"], dict)
    ):
        return _error(request_id, types.INVALID_PARAMS, "Invalid params: params must be a JSON object")
    return _error(request_id, types.INVALID_REQUEST, "Invalid Request: not a valid JSON-RPC 2.0 message")


def _error(request_id: int | str | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))


class Lines:
    """stdin as the SDK's reader iterates it, answering refused lines through `answer_with`'s stream."""

    def __init__(self, source: BinaryIO) -> None:
        self.source = source
        self._replies: Any = None
        self._ready = anyio.Event()

    def answer_with(self, write_stream: Any) -> None:
        """Send refusals to `write_stream` (the transport's outgoing stream); reading starts then."""
        self._replies = write_stream
        self._ready.set()

    def __aiter__(self) -> Lines:
        return self

    async def __anext__(self) -> str:
        await self._ready.wait()
        while True:
            raw = await anyio.to_thread.run_sync(self.source.readline)
            if not raw:
                raise StopAsyncIteration
            line = raw.decode("utf-8", errors="replace")
            if not line.strip():
                continue  # blank lines between messages are not messages
            error = refusal(line)
            if error is None:
                return line
            try:
                await self._replies.send(SessionMessage(error))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                raise StopAsyncIteration from None


async def serve_stdio(lowlevel: Any) -> None:
    """Run the SDK's low-level server over stdio, stdin read by `Lines`."""
    lines = Lines(sys.stdin.buffer)
    async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
        lines.answer_with(write_stream)
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
