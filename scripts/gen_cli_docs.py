"""Generate docs/cli.md from the real `--help` of every `loopx` command (`make docs`).

tests/test_docs.py fails when docs/cli.md differs from what this prints.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from loopx_core.cli.app import app
from loopx_core.errors import EXIT_CODES, ExitCode
from loopx_core.models.constants import MAX_STORED_TIME
from loopx_core.models.domain import describe
from loopx_core.schema.domain import DOMAIN

WIDTH = 100
DOC = Path(__file__).resolve().parent.parent / "docs" / "cli.md"

EXIT_MEANINGS = {
    ExitCode.OK: "success (should-run: a packet was printed, whatever its decision)",
    ExitCode.INTERNAL: "internal error (a bug: please report it)",
    ExitCode.USAGE: "bad arguments: unknown option, invalid id, malformed time or value",
    ExitCode.NOT_FOUND: "no such goal, agent, todo, gate or event, or no `.loopx/` at the root",
    ExitCode.STATE_INVALID: "a state file is unreadable, truncated, invalid or of a newer schema "
    "(should-run still prints a `blocked_health` packet)",
    ExitCode.CONFLICT: "compare-and-swap lost: the todo is leased by another agent, or the id exists",
    ExitCode.LOCK_TIMEOUT: "the goal lock was not free within `LOOPX_LOCK_TIMEOUT` seconds (default 30)",
    ExitCode.REFUSED: "well-formed but not allowed now (operator gate, excluded agent, blocking todo)",
    ExitCode.SCHEMA_UNSUPPORTED: "a state file or journal has a missing, unknown or newer `schema_version` (left unchanged)",
    ExitCode.DRIFT: "`workflow-skills --check`: the installed facade drifted (missing, edited or stale files)",
    ExitCode.INVALID_IDENTITY: "settlement: the identity is malformed (both or neither of todo and replan obligation)",
    ExitCode.RECEIPT_MISSING: "settlement: a step's required receipt is missing (closeout before spend)",
    ExitCode.IDENTITY_MISMATCH: "settlement: another turn, todo or goal than the one named",
    ExitCode.WRITEBACK_MISSING: "settlement: spend before the turn's durable writeback",
    ExitCode.WRITEBACK_REJECTED: "settlement: validation failed (or the host command failed); nothing written back",
    ExitCode.BUDGET_REJECTED: "settlement: the goal's quota is exhausted",
    ExitCode.PERMISSION_DENIED: "settlement: this agent may not act on this turn or todo",
    ExitCode.CANCELLED: "settlement: the turn was cancelled (`loopx turn cancel`)",
    ExitCode.CLOSEOUT_REJECTED: "settlement: terminal closeout refused (other todos still open)",
    ExitCode.LEASE_LOST: "settlement: the todo's lease expired and another agent took it over; nothing settled",
}


def meaning(code: ExitCode) -> str:
    """What an exit code means, for the table."""
    return EXIT_MEANINGS[code]


def _walk(command: Any, path: list[str]) -> list[tuple[list[str], Any]]:
    """Every command under `command`, depth first, in the order `--help` lists them."""
    found = [(path, command)]
    if hasattr(command, "list_commands"):
        ctx = command.context_class(command)
        for name in command.list_commands(ctx):
            found += _walk(command.get_command(ctx, name), [*path, name])
    return found


def domain_section() -> list[str]:
    """The input domain (loopx_core.schema.domain) as a table: every numeric option and id."""
    out = [
        "## Input domain",
        "",
        "Every number, id and time has one domain, declared once in `loopx_core.schema.domain`:",
        "the CLI, the MCP tools and the state files refuse the same values. A value outside it",
        "is a usage error (exit 2) with nothing written; a state file holding one is invalid",
        "state (exit 4) and is left unchanged. Numbers are finite (no `nan`, `inf`).",
        "",
        "| option | domain | used by |",
        "|---|---|---|",
    ]
    for option, kind, used_by in DOMAIN:
        names = ", ".join(f"`{name}`" for name in option.split(", "))
        out.append(f"| {names} | {describe(kind)} | {used_by} |")
    out += [
        "| `--turn-key` | `sha256:` followed by 64 lower-case hex digits, matched in full | turn, writeback, spend |",
        "",
        f"Stored times (a lease or wait that ends later) may run to before {MAX_STORED_TIME.year}.",
        "",
    ]
    return out


def render() -> str:
    """The whole CLI reference as Markdown."""
    root = typer.main.get_command(app)
    out = [
        "# CLI reference",
        "",
        "Generated from the real `--help` by `make docs` (scripts/gen_cli_docs.py); a test keeps it in step.",
        "",
        "## Exit codes",
        "",
        "| code | name | meaning |",
        "|---|---|---|",
    ]
    out += [f"| {int(code)} | {code.name.lower()} | {meaning(code)} |" for code in EXIT_CODES]
    out += [
        "",
        "Errors print one line on stderr (`loopx: error: ...`); under `--format json` a JSON object",
        '`{"error": {"code", "message", "exit_code"}}` is also printed on stdout (settlement refusals',
        "add the refused `step`; `code` is the failure kind).",
        "",
        "When what reads loopx's output goes away first (a closed pipe: `loopx ... | head -c1`), the",
        "rest goes nowhere and the command says so on stderr, exit 1:",
        "`loopx: error: the output pipe was closed before loopx finished writing`; a stdout that",
        "refuses writes otherwise (a full disk, a closed descriptor) is",
        "`loopx: error: the output could not be written (REASON): the answer is lost`, exit 1 (a",
        "command that was already failing keeps its own line and code).",
        "",
        "Interrupted (Ctrl-C; SIGTERM too while `turn run-once` runs its host command): `loopx:",
        "interrupted`, exit 130. `run-once` first stops the host command's whole process group (TERM,",
        "then KILL after 3 s); the turn stays open for `turn run-once --resume`.",
        "",
        "An argument (or `LOOPX_ROOT`) that is not UTF-8 is refused before anything runs, exit 2",
        "(a hook's 1): `loopx: error: argument 8 (the value of --title) is not UTF-8 text: 'bad\\xff'`.",
        "",
        "Environment: `LOOPX_ROOT` picks the project (like `--root`); `LOOPX_NOW` freezes the clock",
        "(ISO-8601, for tests and demos); `LOOPX_LOCK_TIMEOUT` bounds lock waits (seconds);",
        "`LOOPX_NO_FAST_PATH=1` sends every command line to typer (the fast entry of a host's tick",
        "stands aside, to compare both or to debug); `LOOPX_PLUGINS` selects or blocks host plugins.",
        "",
        *domain_section(),
    ]
    for path, command in _walk(root, ["loopx"]):
        ctx = command.context_class(
            command,
            info_name=" ".join(path),
            terminal_width=WIDTH,
            max_content_width=WIDTH,
            help_option_names=["-h", "--help"],
        )
        out += [f"## `{' '.join(path)}`", "", "```text", command.get_help(ctx).rstrip(), "```", ""]
    return "\n".join(out)


def main() -> None:
    """Write docs/cli.md, or with --check exit 1 if it is stale."""
    text = render()
    if "--check" in sys.argv:
        raise SystemExit(0 if DOC.read_text() == text else 1)
    DOC.write_text(text)
    print(f"wrote {DOC}")


if __name__ == "__main__":
    main()
