"""Notice checks: damaged sink files and outbox records, deliveries given up; repairs re-arm."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from loopx_core.doctor.findings import Finding
from loopx_core.doctor.quarantine import quarantine
from loopx_core.errors import StateInvalidError
from loopx_core.models.records import Delivery
from loopx_core.notices import config, outbox


def check_notices(root: Path, now: datetime) -> list[Finding]:
    """Every notice finding."""
    found: list[Finding] = []
    for scope in ("project", "user"):
        try:
            config.read_sinks(root, scope)  # type: ignore[arg-type]
        except StateInvalidError as exc:
            found.append(
                Finding(
                    "notice_sinks_invalid",
                    exc.message,
                    {"file": config.shown_path(scope)},  # type: ignore[arg-type]
                    hint="fix or remove the file, then `loopx notify add` the sinks again",
                )
            )
    for path, record in outbox.records(root):
        if record is None:
            found.append(_damaged(root, path))
            continue
        for sink_id, delivery in record.deliveries.items():
            if delivery.status == "failed":
                found.append(_undelivered(root, record.notice.notice_id, sink_id, delivery))
    return found


def _damaged(root: Path, path: Path) -> Finding:
    def fix() -> str:
        return f"moved it to {quarantine(root, path, _now(), 'unreadable outbox record')}"

    return Finding(
        "notice_record_invalid",
        f"outbox record {path.name} is unreadable",
        {"file": str(path.relative_to(root))},
        fix=fix,
    )


def _undelivered(root: Path, notice_id: str, sink_id: str, delivery: Delivery) -> Finding:
    def fix() -> str:
        from loopx_core.store.lock import file_lock

        with file_lock(outbox.lock_file(root)):
            record = outbox.read(outbox.record_path(root, notice_id))
            if record is None or record.deliveries[sink_id].status != "failed":
                return "already re-armed"
            record.deliveries[sink_id] = Delivery(next_attempt_at=_now())
            outbox.write(root, record)
        return "re-armed: delivered by the flush that follows"

    return Finding(
        "notice_undelivered",
        f"notice {notice_id} never reached sink {sink_id} after {delivery.attempts} attempts: "
        f"{delivery.last_error or 'no error recorded'}",
        {"notice_id": notice_id, "sink_id": sink_id},
        hint="check the sink (`loopx notify test`)",
        fix=fix,
    )


def _now() -> datetime:
    from loopx_core.clock import now

    return now()
