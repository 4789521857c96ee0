"""`loopx doctor`: check state, installation, liveness and notices; `--repair` mends.

Exit codes: 0 healthy, or `--repair` changed something (run it again to see what remains);
9 findings remain and nothing was changed; 2 a bad option; 3 no LoopX state here.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from loopx_core.cli.common import FormatOption, store
from loopx_core.cli.output import Format, emit, reporting
from loopx_core.clock import now
from loopx_core.errors import ExitCode, UsageError


def doctor(
    ctx: typer.Context,
    repair: Annotated[
        bool, typer.Option("--repair", help="Mend what can be mended (quarantine, never delete).")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say what --repair would do; change nothing.")
    ] = False,
    check: Annotated[
        list[str] | None,
        typer.Option("--check", help="Only this group: state, installation, liveness, notices (repeat)."),
    ] = None,
    fmt: FormatOption = Format.auto,
) -> None:
    """Check the project's state, host facades, MCP server, agents' liveness and notices."""
    from loopx_core.doctor.findings import GROUPS
    from loopx_core.doctor.run import run_doctor

    with reporting(fmt):
        groups = tuple(dict.fromkeys(check or GROUPS))
        for group in groups:
            if group not in GROUPS:
                raise UsageError(f"unknown --check {group[:40]!r}; groups: {', '.join(GROUPS)}")
        report = run_doctor(
            store(ctx),
            now(),
            groups=groups,  # type: ignore[arg-type]
            repair=repair or dry_run,
            dry_run=dry_run,
            mcp=True if check and "installation" in check else None,
        )
        emit(report.to_json(), fmt, markdown)
        if report.remaining and not report.changed:
            raise SystemExit(int(ExitCode.DRIFT))


def markdown(data: dict[str, Any]) -> str:
    """The doctor's report for people."""
    s = data["summary"]
    head = "Healthy." if data["healthy"] else f"{s['remaining']} finding(s) remain"
    if data["repair"]:
        done = "dry run: nothing changed" if data["dry_run"] else f"{s['repaired']} repaired"
        head += f" ({done})"
    lines = [f"# loopx doctor: {head}", "", f"Store: {data['store']}. Checked: {', '.join(data['checked'])}."]
    for f in data["findings"]:
        about = ", ".join(f"{k} {v}" for k, v in f["subject"].items())
        lines += ["", f"## {f['code']} ({f['group']}, {f['severity']}): {f['status']}", ""]
        if about:
            lines.append(f"- {about}")
        lines.append(f"- {f['message']}")
        if f.get("done"):
            lines.append(f"- repair: {f['done']}")
        elif f["repair"]:
            lines.append(f"- `--repair` will: {f['repair']}")
        if f.get("hint") and f["status"] != "repaired":
            lines.append(f"- by hand: {f['hint']}")
    return "\n".join(lines) + "\n"
