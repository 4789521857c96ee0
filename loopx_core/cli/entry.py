"""The `loopx` console script.

`loopx quota should-run` runs on every heartbeat tick of every host, so it takes a fast
path that parses its few options by hand and never imports typer. Anything the fast
parser does not fully understand (help, unknown options, other commands) goes to typer,
which gives the same result or the proper usage error.
"""

from __future__ import annotations

import os
import sys

_FAST_OPTIONS = {
    "--goal-id": "goal_id",
    "-g": "goal_id",
    "--agent-id": "agent_id",
    "-a": "agent_id",
    "--available-capability": "capability",
    "-c": "capability",
    "--surface": "surface",
    "--current-rrule": "current_rrule",
    "--format": "format",
    "-f": "format",
    "--root": "root",
}


def parse_fast(argv: list[str]) -> dict[str, object] | None:
    """Parse `[--root R] quota should-run OPTIONS`, or None to defer to typer."""
    args = list(argv)
    found: dict[str, object] = {"capability": [], "root": os.environ.get("LOOPX_ROOT") or None}
    if len(args) >= 2 and args[0] == "--root":
        found["root"] = args[1]
        args = args[2:]
    if args[:2] != ["quota", "should-run"]:
        return None
    rest = args[2:]
    index = 0
    while index < len(rest):
        word = rest[index]
        name, _, inline = word.partition("=") if word.startswith("--") else (word, "", "")
        key = _FAST_OPTIONS.get(name)
        if key is None:
            return None
        if inline:
            value = inline
            index += 1
        else:
            if index + 1 >= len(rest):
                return None
            value = rest[index + 1]
            index += 2
        if key == "capability":
            found["capability"].append(value)  # type: ignore[union-attr]
        elif key in found and key != "root":
            return None  # repeated single option: let typer decide
        else:
            found[key] = value
    if "goal_id" not in found or "agent_id" not in found:
        return None
    if found.get("format", "auto") not in ("auto", "human", "json", "markdown"):
        return None  # typer refuses it, with its did-you-mean
    return found


def main(argv: list[str] | None = None) -> None:
    """Run `loopx` with `argv` (default: the process arguments)."""
    args = sys.argv[1:] if argv is None else argv
    fast = None if os.environ.get("LOOPX_NO_FAST_PATH") else parse_fast(args)
    if fast is not None:
        from loopx_core.cli.output import Format, report_internal, resolve
        from loopx_core.cli.should_run import run_should_run

        # as the typer command: `auto` is JSON in a pipe, else the packet's Markdown (its human form)
        shown = resolve(Format(fast.get("format", "auto")))  # type: ignore[arg-type]
        fmt = Format.json if shown is Format.json else Format.markdown
        try:
            code = run_should_run(
                fast["root"],  # type: ignore[arg-type]
                fast["goal_id"],  # type: ignore[arg-type]
                fast["agent_id"],  # type: ignore[arg-type]
                fast["capability"] or None,  # type: ignore[arg-type]
                fast.get("surface"),  # type: ignore[arg-type]
                fmt,
                current_rrule=fast.get("current_rrule"),  # type: ignore[arg-type]
            )
        except Exception as error:  # the fast path's last line of defence against a traceback
            code = report_internal(error, fmt)
        raise SystemExit(code)
    from loopx_core.cli.app import app

    app(args=args, prog_name="loopx")
