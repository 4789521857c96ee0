"""Run the doctor: the checks asked for, then (with `repair`) each finding's repair, in order.

A dry run repairs nothing and says what each repair would do. After repairs the outbox is
flushed (a repair may have re-armed a notice; a stalled agent's notice goes out now).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from loopx_core.doctor.findings import CODES, GROUPS, Finding, Group
from loopx_core.errors import LoopxError
from loopx_core.store.base import Store

SCHEMA = "loopx_doctor_v1"


@dataclass
class Report:
    """What the doctor found and did."""

    checked: list[Group]
    repair: bool
    dry_run: bool
    store: str = "files"
    """The store in use (a PostgreSQL DSN redacted)."""
    findings: list[Finding] = field(default_factory=list)
    changed: bool = False

    @property
    def remaining(self) -> list[Finding]:
        """Findings still standing (found, failed to repair, or only would be repaired)."""
        return [f for f in self.findings if f.status != "repaired"]

    def to_json(self) -> dict[str, Any]:
        """As JSON data (`loopx_doctor_v1`)."""
        return {
            "schema": SCHEMA,
            "store": self.store,
            "checked": list(self.checked),
            "repair": self.repair,
            "dry_run": self.dry_run,
            "healthy": not self.remaining,
            "summary": {
                "found": len(self.findings),
                "repaired": sum(f.status == "repaired" for f in self.findings),
                "remaining": len(self.remaining),
            },
            "findings": [f.to_json() for f in self.findings],
        }


def run_doctor(
    store: Store,
    now: datetime,
    *,
    groups: tuple[Group, ...] = GROUPS,
    repair: bool = False,
    dry_run: bool = False,
    mcp: bool | None = None,
) -> Report:
    """Check `groups`; with `repair` (and not `dry_run`) mend what can be mended."""
    report = Report(list(groups), repair, dry_run, store=store.label)
    if "state" in groups:
        from loopx_core.doctor.state import check_state

        report.findings += check_state(store, now)
    if "installation" in groups:
        from loopx_core.doctor.installation import check_installation

        report.findings += check_installation(store.root, mcp=mcp)
    if "liveness" in groups:
        from loopx_core.doctor.liveness import check_liveness

        with contextlib.suppress(LoopxError):  # an unreadable registry: the state check says so
            report.findings += check_liveness(store, now, notify=not dry_run)
    if "notices" in groups:
        from loopx_core.doctor.outbox import check_notices

        report.findings += check_notices(store.root, now)
    report.findings.sort(key=lambda f: (GROUPS.index(f.group), _rank(f), f.code))
    if repair:
        for finding in report.findings:
            if finding.fix is None:
                continue
            if dry_run:
                finding.status, finding.done = "would_repair", finding.plan or CODES[finding.code].repair
                continue
            try:
                finding.done = finding.fix()
                finding.status = "repaired"
                report.changed = True
            except LoopxError as exc:
                finding.status, finding.done = "repair_failed", exc.message
            except OSError as exc:
                finding.status, finding.done = "repair_failed", f"I/O error: {exc.strerror or exc}"
        if report.changed and "state" in groups:
            _verify_state(report, store, now)
    if not dry_run and "notices" in groups:
        _flush(store)
    return report


def _verify_state(report: Report, store: Store, now: datetime) -> None:
    """Check the state again after its repairs: a repair only counts if its finding is gone.

    A repair can do its part and still leave the goal broken (no previous good version to
    restore; the file's folder is itself a file), and mending one file can uncover the next
    problem (a restored older state no longer names a turn's journal). Either stands in the
    report, so `healthy` and the exit code say what the next check would.
    """
    from loopx_core.doctor.state import check_state

    after = {(f.code, tuple(sorted(f.subject.items()))): f for f in check_state(store, now)}
    for finding in report.findings:
        if finding.group != "state":
            continue
        still = after.pop((finding.code, tuple(sorted(finding.subject.items()))), None)
        if still is not None and finding.status == "repaired":
            finding.status = "repair_failed"
            finding.done = f"{finding.done}; it still stands: {still.message}"
    for uncovered in after.values():
        uncovered.fix = None  # found by this run's repairs: the next --repair mends it
        report.findings.append(uncovered)
    report.findings.sort(key=lambda f: (GROUPS.index(f.group), _rank(f), f.code))


def _rank(f: Finding) -> int:
    return ("high", "medium", "low").index(f.severity)


def _flush(store: Store) -> None:
    """Deliver what is due (never fails the doctor: what remains is reported next time); an empty
    outbox loads neither the sink plugins nor the flush lock."""
    from loopx_core.notices import outbox

    if not outbox.paths(store.root):
        return
    from loopx_core.doctor.sinkkinds import sink_kinds
    from loopx_core.notices.delivery import flush

    with contextlib.suppress(LoopxError, OSError):
        flush(store.root, sink_kinds())
