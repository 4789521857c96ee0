"""`loopx mcp serve`: the LoopX tools over MCP (stdio), on the official `mcp` SDK.

The server keeps no state between calls: every tool opens the store afresh, so the CLI and
the server can be used side by side. Every refusal, whether a bad argument or a refused
operation, comes back as an error result whose text is the CLI's JSON error object.

The SDK is imported only by `serve` (the one command that needs it); if it cannot be
imported, `serve` prints one line and exits 1, without a traceback.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

from loopx_core.errors import ExitCode

# Every SDK module the server uses, imported up front so a broken install fails in one place.
SDK_MODULES = (
    "mcp_types",
    "mcp.server.mcpserver",
    "mcp.server.mcpserver.exceptions",
    "mcp.server.mcpserver.tools",
    "mcp.server.stdio",
    "mcp.shared.exceptions",
    "mcp.shared.message",
)


def sdk_problem() -> str | None:
    """None when the MCP SDK imports, else a one-line reason that names no local path."""
    for name in SDK_MODULES:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as error:
            return f"module {error.name or name!r} is missing"
        except Exception as error:  # a broken install can raise anything while importing
            return f"importing {name!r} failed ({type(error).__name__})"
    return None


def serve(root: str | None = None) -> None:
    """Run the server on stdio until the client closes it; exit 1 with one line if the SDK is broken."""
    problem = sdk_problem()
    if problem is not None:
        sys.stderr.write(
            f"loopx: error: cannot serve MCP: the MCP SDK (`mcp` package) does not import: {problem}; "
            "reinstall LoopX (`pip install loopx-kit`, or `pip install -e .` in a checkout)\n"
        )
        raise SystemExit(int(ExitCode.INTERNAL))
    from loopx_core.mcp.server import build_server

    try:
        _run(build_server(root))
    except KeyboardInterrupt:
        raise SystemExit(130) from None


def _run(server: Any) -> None:
    try:
        server.run()
    except* (BrokenPipeError, ConnectionResetError):
        # The client closed our stdout: the session is over. Point fd 1 at the null device so
        # the interpreter's final flush cannot fail again on the dead pipe.
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
