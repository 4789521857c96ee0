"""`loopx doctor`: check state, installation, liveness and notices; `--repair` mends.

Exit codes: 0 healthy, or `--repair` changed something (run it again to see what remains);
9 findings remain and nothing was changed; 2 a bad option; 3 no LoopX state here.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated, Any

import typer

from loopx_core.cli.common import FormatOption
from loopx_core.cli.formats import Format
from loopx_core.cli.output import emit, reporting, steps
from loopx_core.clock import now
from loopx_core.errors import ExitCode, UsageError

if TYPE_CHECKING:
    from loopx_core.doctor.findings import Finding, Group
    from loopx_core.doctor.run import Report
    from loopx_core.store.base import Store


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

    with reporting(fmt):
        groups = tuple(dict.fromkeys(check or GROUPS))
        for group in groups:
            if group not in GROUPS:
                raise UsageError(f"unknown --check {group[:40]!r}; groups: {', '.join(GROUPS)}")
        mcp = "installation" in (check or ())
        opened, unchosen = _store(ctx)
        run = groups if unchosen is None else tuple(g for g in groups if g not in NEED_THE_STORE)
        report = (
            _run(opened, run, repair or dry_run, dry_run, mcp, fmt)
            if run
            else _empty(groups, repair, dry_run)
        )
        if unchosen is not None:
            report.checked, report.store = list(groups), "unknown"
            if "state" in groups or "liveness" in groups:
                report.findings.insert(0, unchosen)
        emit(report.to_json(), fmt, markdown)
        if report.remaining and not report.changed:
            raise SystemExit(int(ExitCode.DRIFT))


NEED_THE_STORE = ("state", "liveness")
"""The groups that read the store (installation and notices need only the project folder)."""


def _store(ctx: typer.Context) -> tuple[Store, Finding | None]:
    """The project's store; when `.loopx/store.json` itself is what is wrong, the file store's
    folder for the checks that need no store, and that as a finding (the doctor reports it,
    as the line every other command prints says). A bad `LOOPX_STORE` stays its usage error."""
    from loopx_core.doctor.findings import Finding
    from loopx_core.errors import LoopxError
    from loopx_core.store import choice
    from loopx_core.store.files import FileStore
    from loopx_core.store.roots import find_root

    root = find_root((ctx.find_root().obj or {}).get("root"))
    try:
        return choice.open_store(root), None
    except LoopxError as error:
        if os.environ.get(choice.ENV_VAR, "").strip():
            raise
        where = f"{choice.STATE_DIR}/{choice.CONFIG_FILE}"
        hint = (
            f"fix {where}, or move it aside to use the file store (`loopx init --store` writes a sound one)"
        )
        return FileStore(root), Finding("store_choice_invalid", error.message, {"file": where}, hint=hint)


def _empty(groups: tuple[Group, ...], repair: bool, dry_run: bool) -> Report:
    from loopx_core.doctor.run import Report

    return Report(list(groups), repair or dry_run, dry_run)


def _run(s: Store, groups: tuple[Group, ...], repair: bool, dry_run: bool, mcp: bool, fmt: Format) -> Report:
    """Run the doctor; on a terminal (not JSON) one line per step on stderr as it goes.

    Checks alone run group by group, each announced; with repairs it is one run (every
    check before any repair, as in a pipe), announced once. Either way the installer says
    which host facade it checks or re-installs (`checking installation: codex-app (user scope)`).
    """
    from loopx_core.doctor.findings import GROUPS
    from loopx_core.doctor.run import run_doctor
    from loopx_installer.progress import listening

    show = steps(fmt)
    options: dict[str, Any] = {"repair": repair, "dry_run": dry_run, "mcp": True if mcp else None}
    if show is None:
        return run_doctor(s, now(), groups=groups, **options)

    def installer_step(text: str) -> None:
        show(
            f"checking installation: {text.removeprefix('checking ')}"
            if text.startswith("checking ")
            else text
        )

    with listening(installer_step):
        if repair:
            show(f"checking {', '.join(groups)}, then {'planning' if dry_run else 'making'} repairs")
            return run_doctor(s, now(), groups=groups, **options)
        report: Report | None = None
        for group in (g for g in GROUPS if g in groups):
            show(f"checking {GROUP_STEPS[group]}")
            part = run_doctor(s, now(), groups=(group,), **options)
            report = part if report is None else report
            if part is not report:
                report.findings += part.findings
    assert report is not None  # groups is never empty
    report.checked = list(groups)
    return report


GROUP_STEPS = {
    "state": "state (goals, ledger, journals)",
    "installation": "installation (host facades, the MCP server)",
    "liveness": "liveness (agents' heartbeats)",
    "notices": "notices (the outbox)",
}
"""What each doctor group looks at, as its step line says."""


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
