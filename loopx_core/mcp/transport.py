"""Stdio transport that answers every malformed JSON-RPC line, instead of dropping it.

The SDK's stdio reader turns a line it cannot parse into an exception item that its
dispatcher logs and drops, so a client that sent `{"id": 3, "method": "tools/call",
"params": "x"}` waits forever. Here stdin is read by `Lines`, which checks each line with
the SDK's own message model first: a line the SDK would drop is answered at once with a
JSON-RPC error (parse error, invalid request, or invalid params, with the request's id
when it has a usable one) and never reaches the SDK; every other line goes on unchanged,
but one: a client's cancellation of a tool call. Each tool call is one step of state (a
write, done whole or not at all), and the SDK, told to cancel one already running in its
worker thread, lets the step finish and answers nothing, so the client cannot know it
happened and may do it again. The cancellation is ignored (JSON-RPC lets a receiver ignore
one it cannot honour) and the call is answered with what it did. A cancelled request of
another kind goes on to the SDK, and is no longer awaited when stdin ends.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from loopx_core.mcp import answers


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
    request_id = _usable_id(data)
    if found := answers.lone_surrogate(data):
        # Python's parser takes a `\udcff` escape; the SDK's does not, and no reply could hold it.
        where, surrogate = found
        return _error(
            request_id,
            types.INVALID_REQUEST,
            f"Invalid Request: {answers.shorten(where)} is not Unicode text (a lone surrogate, {surrogate})",
        )
    if (
        request_id is not None
        and data.get("jsonrpc") == "2.0"
        and isinstance(data.get("method"), str)
        and "params" in data
        and not isinstance(data["params"], dict)
    ):
        return _error(request_id, types.INVALID_PARAMS, "Invalid params: params must be a JSON object")
    return _error(request_id, types.INVALID_REQUEST, "Invalid Request: not a valid JSON-RPC 2.0 message")


def undecodable(raw: bytes, error: UnicodeDecodeError) -> types.JSONRPCError:
    """The JSON-RPC error answering a line that is not UTF-8 (JSON-RPC text is UTF-8, RFC 8259).

    Decoding it with replacement characters would store a title the client never sent; the
    request's id is kept when the line, read leniently, has a usable one, so its sender is answered.
    """
    try:
        data: Any = json.loads(raw.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError):
        data = None
    request_id = _usable_id(data) if isinstance(data, dict) else None
    code = types.INVALID_REQUEST if request_id is not None else types.PARSE_ERROR
    kind = "Invalid Request" if request_id is not None else "Parse error"
    return _error(
        request_id, code, f"{kind}: the message is not UTF-8 text (byte {error.start} cannot be read)"
    )


def _usable_id(data: dict[str, Any]) -> int | str | None:
    request_id = data.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, int | str):
        return None
    return request_id


def _error(request_id: int | str | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))


MAX_LINE = 64 * 1024 * 1024
"""Longest message line read, in bytes; a longer one is answered as invalid and skipped."""
_TOO_LONG = b""  # handed on in place of an over-long line (a real line is never empty)
DRAIN_SECONDS = 300.0
"""How long, once stdin ends, the server still waits for the answers to requests it was sent."""


class Lines:
    """stdin as the SDK's reader iterates it, answering refused lines through `answer_with`'s stream.

    A daemon thread reads the file descriptor with `os.read` (no buffered-file lock that
    could be held at exit): on Ctrl-C the loop ends at once, and the thread, still waiting
    on stdin, does not hold up the interpreter's exit.
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._replies: Any = None
        self._ready = anyio.Event()
        self._send, self._receive = anyio.create_memory_object_stream[bytes](0)
        self._unanswered: dict[int | str, str] = {}
        """The requests handed on that the server has not answered yet: id -> method."""
        self._answered = anyio.Event()

    def answer_with(self, write_stream: Any) -> None:
        """Send refusals to `write_stream` (the transport's outgoing stream); reading starts then."""
        self._replies = write_stream
        token = anyio.lowlevel.current_token()
        threading.Thread(target=self._pump, args=(token,), name="loopx-mcp-stdin", daemon=True).start()
        self._ready.set()

    def _pump(self, token: Any) -> None:
        def hand_on(line: bytes) -> None:
            anyio.from_thread.run(self._send.send, line, token=token)

        buffer = bytearray()
        skipping = False  # inside an over-long line, until its newline
        try:
            while chunk := os.read(self.fd, 1 << 16):
                searched = len(buffer)
                buffer += chunk
                while (end := buffer.find(b"\n", searched)) >= 0:
                    if not skipping:
                        hand_on(bytes(buffer[: end + 1]) if end < MAX_LINE else _TOO_LONG)
                    skipping = False
                    del buffer[: end + 1]
                    searched = 0
                if len(buffer) > MAX_LINE:
                    if not skipping:
                        hand_on(_TOO_LONG)
                    skipping = True
                    buffer.clear()
            if buffer and not skipping:
                hand_on(bytes(buffer))
        except Exception:  # the loop is gone (the session ended) or stdin failed: stop reading
            pass
        finally:
            with contextlib.suppress(Exception):
                anyio.from_thread.run_sync(self._send.close, token=token)

    def __aiter__(self) -> Lines:
        return self

    async def __anext__(self) -> str:
        await self._ready.wait()
        while True:
            try:
                raw = await self._receive.receive()
            except anyio.EndOfStream:
                # stdin ended (a client may send its last request and close at once): the
                # session ends when this stream does, so first let the server answer them all
                with anyio.move_on_after(DRAIN_SECONDS):
                    while self._unanswered:
                        await self._answered.wait()
                        self._answered = anyio.Event()
                raise StopAsyncIteration from None
            error: types.JSONRPCError | None
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as failure:
                line, error = "", undecodable(raw, failure)
            else:
                if not raw:  # the reader thread skipped an over-long line
                    error = _error(
                        None,
                        types.INVALID_REQUEST,
                        f"Invalid Request: a message longer than {MAX_LINE} bytes",
                    )
                elif not line.strip():
                    continue  # blank lines between messages are not messages
                else:
                    error = refusal(line)
            if error is None:
                if self._admit(line):
                    return line
                continue
            try:
                await self._replies.send(SessionMessage(error))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                raise StopAsyncIteration from None

    def _admit(self, line: str) -> bool:
        """Whether `line` (an SDK-valid message) goes on to the SDK: a request is remembered
        until it is answered; a cancellation of a tool call in flight stays here."""
        data = json.loads(line)
        if not isinstance(data, dict):
            return True
        if "method" in data and (request_id := _usable_id(data)) is not None:
            self._unanswered[request_id] = data["method"]
            return True
        if data.get("method") != "notifications/cancelled":
            return True
        params = data.get("params")
        target = params.get("requestId") if isinstance(params, dict) else None
        if isinstance(target, bool) or not isinstance(target, int | str) or target not in self._unanswered:
            return True  # nothing in flight by that id (answered already): the SDK ignores it too
        if self._unanswered[target] == "tools/call":
            return False  # it runs to its end and is answered with what it did
        del self._unanswered[target]  # cancelled, the SDK answers it with nothing: not awaited
        self._answered.set()
        return True

    def note_sent(self, message: SessionMessage) -> None:
        """The server sent `message`: an answer settles its request."""
        sent = message.message
        if isinstance(sent, types.JSONRPCResponse | types.JSONRPCError) and sent.id in self._unanswered:
            del self._unanswered[sent.id]
            self._answered.set()


class _Watched:
    """The server's outgoing stream, telling `Lines` of each answer it carries (else the same)."""

    def __init__(self, stream: Any, lines: Lines) -> None:
        self._stream, self._lines = stream, lines

    async def send(self, message: SessionMessage) -> None:
        await self._stream.send(message)
        self._lines.note_sent(message)

    async def __aenter__(self) -> _Watched:
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> Any:
        return await self._stream.__aexit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


async def serve_stdio(lowlevel: Any) -> None:
    """Run the SDK's low-level server over stdio, stdin read by `Lines`."""
    lines = Lines(sys.stdin.fileno() if sys.stdin else 0)
    async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
        lines.answer_with(write_stream)
        watched = _Watched(write_stream, lines)
        await lowlevel.run(read_stream, watched, lowlevel.create_initialization_options())
