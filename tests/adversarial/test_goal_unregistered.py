"""Class: a goal folder the registry does not name is reported by the doctor, with how to mend it.

A registry rewritten by hand to `{"schema_version":1}` (or any registry missing some goals)
once left `doctor` healthy and `status` empty while the goal folders, their state, ledger and
runs stayed on disk. For generated sets of goals and a generated subset dropped from the
registry, the doctor reports exactly the dropped ones (`goal_unregistered`, one each, naming
the folder), is unhealthy, writes nothing, and its hint points at `registry.json.prev` when
that names the goal; restoring it makes the doctor healthy again.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.doctor.run import run_doctor
from loopx_core.ops import goals
from loopx_core.store.files import FileStore
from tests.conftest import T0, run_loopx
from tests.non_files import tree_of_kinds

IDS = st.lists(st.from_regex(r"[a-z][a-z0-9]{0,5}", fullmatch=True), min_size=1, max_size=4, unique=True)


def _project(root: Path, ids: list[str]) -> FileStore:
    root.mkdir(parents=True)
    store = FileStore(root)
    store.init()
    for goal_id in ids:
        goals.add_goal(store, goal_id, "Objective", T0)
    return store


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ids=IDS, data=st.data())
def test_the_doctor_reports_exactly_the_goal_folders_the_registry_drops(
    tmp_path_factory: object, ids: list[str], data: st.DataObject
) -> None:
    root = Path(tmp_path_factory.mktemp("p"))  # type: ignore[attr-defined]
    store = _project(root / "p", ids)
    dropped = set(data.draw(st.lists(st.sampled_from(ids), unique=True, min_size=1)))
    registry = json.loads(store.registry_path.read_text())
    registry["goals"] = {k: v for k, v in registry["goals"].items() if k not in dropped}
    store.registry_path.write_text(json.dumps(registry, indent=2) + "\n")
    before = tree_of_kinds(store.root)
    report = run_doctor(store, T0, groups=("state",))
    found = [f for f in report.findings if f.code == "goal_unregistered"]
    assert sorted(f.subject["goal_id"] for f in found) == sorted(dropped)
    assert all(f".loopx/goals/{f.subject['goal_id']}/" in f.message for f in found)
    assert report.to_json()["healthy"] is False
    assert tree_of_kinds(store.root) == before  # the doctor only reports


def test_a_registry_emptied_by_hand_is_unhealthy_through_the_cli_and_the_hint_works(tmp_path: Path) -> None:
    store = _project(tmp_path / "p", ["g", "h"])
    goals.register_agent(store, "a", [], T0)  # so the kept previous registry names both goals
    (store.root / ".loopx/registry.json").write_text('{"schema_version":1}\n')
    result = run_loopx("doctor", "--check", "state", "--format", "json", root=store.root)
    assert result.exit_code == 9, result.stdout + result.stderr
    report = json.loads(result.stdout)
    codes = sorted((f["code"], f["subject"]["goal_id"]) for f in report["findings"])
    assert codes == [("goal_unregistered", "g"), ("goal_unregistered", "h")]
    assert all("registry.json.prev" in f["hint"] for f in report["findings"])  # the previous one names both
    shutil.copy(store.root / ".loopx/registry.json.prev", store.root / ".loopx/registry.json")
    after = run_loopx("doctor", "--check", "state", "--format", "json", root=store.root)
    assert after.exit_code == 0 and json.loads(after.stdout)["healthy"] is True, after.stdout


def test_without_a_previous_registry_the_hint_says_restore_or_move(tmp_path: Path) -> None:
    store = _project(tmp_path / "p", ["g"])
    (store.root / ".loopx/registry.json.prev").unlink(missing_ok=True)
    (store.root / ".loopx/registry.json").write_text('{"schema_version":1}\n')
    (report,) = [
        f for f in run_doctor(store, T0, groups=("state",)).findings if f.code == "goal_unregistered"
    ]
    assert "from a backup" in (report.hint or "") and "move the folder aside" in (report.hint or "")
