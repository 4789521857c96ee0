"""Class: how `loopx mcp serve` cuts its stdin into messages, at every edge of a line.

JSON-RPC over stdio is one message per line. Blank lines between messages are no messages
(no answer, the next request is answered); a line that is not UTF-8 and not JSON either is a
parse error with a null id (nothing to answer it by); and a line longer than `MAX_LINE` that arrives in
many reads, past the limit long before its newline, is answered once as too long and its rest
skipped, the session going on. Over a raw stdio session (tests/mcpinputs.py).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from loopx_core.mcp.transport import MAX_LINE
from tests.conftest import Project
from tests.mcpclient import TOOLS
from tests.mcpinputs import RawServer, setup_turn


@pytest.fixture
def raw(project: Project, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawServer]:
    """A set-up project served over a raw stdio session (its stderr kept outside the project)."""
    setup_turn(project)
    server = RawServer(project.root, tmp_path_factory.mktemp("server") / "stderr.txt")
    yield server
    if server.proc.poll() is None:
        server.close()


def write(raw: RawServer, data: bytes) -> None:
    """Bytes to the server's stdin, as they are."""
    assert raw.proc.stdin is not None
    raw.proc.stdin.write(data)
    raw.proc.stdin.flush()


def test_blank_lines_between_messages_are_no_messages(raw: RawServer) -> None:
    write(raw, b"\n  \n\t\r\n")
    listed = raw.request("tools/list", {})  # its reply is the next line: the blanks got none
    assert {t["name"] for t in listed["result"]["tools"]} == TOOLS
    assert "Traceback" not in raw.close()


@pytest.mark.parametrize("line", [b"\xff\xfe not json", b'{"id": 3, "method": \xc3(', b"\x80"])
def test_a_line_neither_utf8_nor_json_is_a_parse_error(raw: RawServer, line: bytes) -> None:
    write(raw, line + b"\n")
    answer = raw.reply()
    assert answer["id"] is None and answer["error"]["code"] == -32700, answer
    assert raw.request("tools/call", {"name": "status", "arguments": {}})["result"]["isError"] is False
    assert "Traceback" not in raw.close()


def test_a_line_past_the_limit_long_before_its_newline_is_answered_once(raw: RawServer) -> None:
    start = b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "'
    write(raw, start)
    piece = b"x" * (1 << 20)
    for _ in range(MAX_LINE // len(piece) + 2):  # 2 MiB past the limit before the newline
        write(raw, piece)
    write(raw, b'"}}\n')
    answer = raw.reply()
    assert answer["id"] is None and answer["error"]["code"] == -32600, answer
    assert str(MAX_LINE) in answer["error"]["message"]
    assert raw.request("tools/call", {"name": "status", "arguments": {}})["result"]["isError"] is False
    assert "Traceback" not in raw.close()
