"""Class: `doctor --repair` reports what the next `doctor` will find, never a repair that did not hold.

Observed: with a goal's state.json and its .prev both zeroed, the repair moved state.json
aside, could restore nothing, and the report said `repaired`, `healthy: true`, while the
next `doctor` (and `status`) found the goal as broken as before; with `.loopx/goals` a file,
the repair moved nothing and still said `repaired`; a state restored from an older .prev
no longer named its open turn's journal, which only the next run found (`orphan_journal`).

Now the state is checked again after its repairs: a finding that still stands is
`repair_failed` (its `done` says what stands), one the repairs uncovered is listed as
`found`, so `healthy` and every finding's status agree with a fresh check. Generated:
one to three damages (of nine kinds) to the files and folders a goal's state lives in.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.doctor.run import Report, run_doctor
from loopx_core.store.files import FileStore
from tests.builders import lived_in_project
from tests.conftest import T0, Cli

TARGETS: dict[str, Callable[[Path, str], Path]] = {
    "registry": lambda root, key: root / ".loopx/registry.json",
    "registry.prev": lambda root, key: root / ".loopx/registry.json.prev",
    "state": lambda root, key: root / ".loopx/goals/g/state.json",
    "state.prev": lambda root, key: root / ".loopx/goals/g/state.json.prev",
    "journal": lambda root, key: root / f".loopx/goals/g/turns/{key[7:]}.json",
    "ledger": lambda root, key: root / ".loopx/goals/g/events.jsonl",
    "scheduler": lambda root, key: root / ".loopx/goals/g/scheduler.json",
    "goal folder": lambda root, key: root / ".loopx/goals/g",
    "goals folder": lambda root, key: root / ".loopx/goals",
}
KINDS = [
    "zeroed",
    "empty",
    "truncated",
    "garbage",
    "wrong type",
    "folder",
    "file",
    "dangling link",
    "link out",
]


def _damage(path: Path, kind: str, outside: Path) -> None:
    if not (path.exists() or path.is_symlink()):
        return
    good = path.read_bytes() if path.is_file() else b""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()
    if kind == "folder":
        path.mkdir()
    elif kind == "dangling link":
        path.symlink_to(path.parent / "nowhere")
    elif kind == "link out":
        path.symlink_to(outside)
    else:
        data = {
            "zeroed": b"\0" * max(len(good), 8),
            "empty": b"",
            "truncated": good[: len(good) // 2],
            "garbage": b"\xff\xfe not json",
            "wrong type": b"[1, 2]",
            "file": b"x",
        }[kind]
        path.write_bytes(data)


def _key(report: Report) -> set[tuple[str, str]]:
    return {(f.code, json.dumps(f.subject, sort_keys=True)) for f in report.remaining}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    damages=st.lists(
        st.tuples(st.sampled_from(sorted(TARGETS)), st.sampled_from(KINDS)), min_size=1, max_size=3
    )
)
def test_a_repair_report_agrees_with_the_next_check(
    tmp_path_factory: pytest.TempPathFactory, damages: list[tuple[str, str]]
) -> None:
    with tempfile.TemporaryDirectory(dir=tmp_path_factory.getbasetemp()) as tmp:
        root = Path(tmp) / "project"
        outside = Path(tmp) / "outside.json"
        outside.write_text('{"not": "loopx"}')
        key = lived_in_project(root)
        for target, kind in damages:
            _damage(TARGETS[target](root, key), kind, outside)
        store = FileStore(root)
        if not store.is_initialized():  # no registry file: no LoopX state here (exit 3), nothing to mend
            return
        repaired = run_doctor(store, T0, groups=("state",), repair=True)
        fresh = run_doctor(FileStore(root), T0, groups=("state",))
        assert _key(repaired) == _key(fresh), (damages, repaired.to_json(), fresh.to_json())
        assert repaired.to_json()["healthy"] == fresh.to_json()["healthy"]
        for finding in repaired.findings:
            if finding.status == "repair_failed":
                assert (finding.done and "it still stands" in finding.done) or "error" in (finding.done or "")
        assert outside.read_text() == '{"not": "loopx"}'  # a link out is moved, never written through


def test_the_observed_case_through_the_cli(cli: Cli) -> None:
    key = lived_in_project(cli.root)
    for target in ("state", "state.prev"):
        _damage(TARGETS[target](cli.root, key), "zeroed", cli.root / "unused")
    result = cli("doctor", "--repair", "-f", "json")
    data = json.loads(result.stdout)
    assert data["healthy"] is False and data["summary"]["repaired"] == 0, data
    [finding] = [f for f in data["findings"] if f["code"] == "state_corrupt"]
    assert finding["status"] == "repair_failed"
    assert "no previous good version" in finding["done"] and "it still stands" in finding["done"]
    again = cli("doctor", "-f", "json")
    assert again.exit_code == 9 and json.loads(again.stdout)["healthy"] is False
