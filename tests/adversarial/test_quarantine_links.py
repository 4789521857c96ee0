"""Class: `doctor --repair` never moves a damaged file out of `.loopx/` through a symbolic link.

Observed: with `.loopx/quarantine` a link to a folder outside the project, `doctor --repair`
moved the damaged goal state there (and wrote its `.why.json` beside it): a state file, or
an outbox record holding a notice sink's URL, left the project. The installer refuses the
same for its backups (tests/adversarial/test_install_paths.py).

Now every folder on the way into quarantine is checked: a link anywhere on it (the
quarantine folder, this run's time-stamped folder, a goal's folder inside it) makes the
repair `repair_failed` with one line naming the link; the damaged file stays where it was
and nothing is written outside. Each kind of file a repair quarantines (a goal state, a
scheduler file, a torn ledger tail, a journal) x each place the link can stand.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from loopx_core.doctor.run import run_doctor
from loopx_core.store.files import FileStore
from tests.builders import lived_in_project
from tests.conftest import T0, T0_ISO

STAMP = T0.strftime("%Y%m%dT%H%M%SZ")
LINKS = {
    "quarantine": ".loopx/quarantine",
    "this run's folder": f".loopx/quarantine/{STAMP}",
    "the goal's folder in it": f".loopx/quarantine/{STAMP}/goals",
}


def _state(root: Path, key: str) -> Path:
    (root / ".loopx/goals/g/state.json").write_bytes(b"garbage")
    return root / ".loopx/goals/g/state.json"


def _scheduler(root: Path, key: str) -> Path:
    (root / ".loopx/goals/g/scheduler.json").write_bytes(b"garbage")
    return root / ".loopx/goals/g/scheduler.json"


def _torn(root: Path, key: str) -> Path:
    ledger = root / ".loopx/goals/g/events.jsonl"
    ledger.write_bytes(ledger.read_bytes() + b'{"torn": ')
    return ledger


def _journal(root: Path, key: str) -> Path:
    journal = root / f".loopx/goals/g/turns/{key[7:]}.json"
    journal.write_bytes(b"garbage")
    return journal


DAMAGES = {"goal state": _state, "scheduler": _scheduler, "torn ledger tail": _torn, "journal": _journal}


@pytest.mark.parametrize("link", sorted(LINKS))
@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_a_repair_does_not_go_through_a_link(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str, link: str
) -> None:
    monkeypatch.setenv("LOOPX_NOW", T0_ISO)
    root = tmp_path / "project"
    key = lived_in_project(root)  # a settled turn, a scheduler ack, an open turn (its key)
    damaged = DAMAGES[damage](root, key)
    before = damaged.read_bytes()
    outside = tmp_path / "outside"
    outside.mkdir()
    place = root / LINKS[link]
    place.parent.mkdir(parents=True, exist_ok=True)
    place.symlink_to(outside, target_is_directory=True)

    report = run_doctor(FileStore(root), T0, groups=("state",), repair=True)

    failed = [f for f in report.findings if f.status == "repair_failed"]
    assert failed, report.to_json()
    assert all("refusing to quarantine through the symlink" in (f.done or "") for f in failed), (
        report.to_json()
    )
    assert not any(f.status == "repaired" and "quarantine" in (f.done or "") for f in report.findings)
    assert list(outside.iterdir()) == [], sorted(str(p) for p in outside.rglob("*"))
    assert damaged.read_bytes() == before
    assert str(tmp_path) not in str(report.to_json())
    place.unlink()
    shutil.rmtree(root / ".loopx/quarantine", ignore_errors=True)
    mended = run_doctor(FileStore(root), T0, groups=("state",), repair=True)  # the link gone, it mends
    assert not any(f.status == "repair_failed" for f in mended.findings), mended.to_json()
