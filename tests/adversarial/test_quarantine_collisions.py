"""Class: two repairs that quarantine the same file in the same second keep both copies.

Observed: two torn tails of one ledger cut in the same second overwrote each other's
quarantined fragment. Generated: any number of torn tails and damaged files, of the same
paths, quarantined at one instant (one after another, and from racing threads): every
fragment and every file is kept, byte for byte, each in a place of its own.
"""

from __future__ import annotations

import tempfile
import threading
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.doctor.quarantine import QUARANTINE, cut_torn_tail, quarantine
from loopx_core.store.files import STATE_DIR
from tests.conftest import T0

FRAGMENTS = st.lists(
    st.binary(min_size=1, max_size=40).filter(lambda b: b"\n" not in b), min_size=1, max_size=6
)


def _kept(root: Path, suffix: str) -> list[bytes]:
    base = root / STATE_DIR / QUARANTINE
    return sorted(p.read_bytes() for p in base.rglob(f"*{suffix}") if p.is_file())


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fragments=FRAGMENTS)
def test_torn_tails_cut_in_one_second_are_all_kept(tmp_path: Path, fragments: list[bytes]) -> None:
    root = Path(tempfile.mkdtemp(dir=tmp_path))
    ledger = root / STATE_DIR / "goals" / "g" / "events.jsonl"
    ledger.parent.mkdir(parents=True)
    for fragment in fragments:
        ledger.write_bytes(b'{"seq": 1}\n' + fragment)
        cut_torn_tail(root, ledger, T0)
        assert ledger.read_bytes() == b'{"seq": 1}\n'
    assert _kept(root, ".torn") == sorted(fragments)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(contents=FRAGMENTS)
def test_racing_quarantines_of_one_path_keep_every_copy(tmp_path: Path, contents: list[bytes]) -> None:
    root = Path(tempfile.mkdtemp(dir=tmp_path))
    state = root / STATE_DIR / "goals" / "g"
    state.mkdir(parents=True)
    for i, content in enumerate(contents):
        (state / f"state.json.{i}").write_bytes(content)
    barrier = threading.Barrier(len(contents))
    moved: list[str] = []

    def move(i: int) -> None:
        path = root / STATE_DIR / "goals" / "g" / "state.json"
        source = root / STATE_DIR / "goals" / "g" / f"state.json.{i}"
        barrier.wait()
        with lock:  # the damaged file is put in place and moved as one step; the claims race
            source.replace(path)
            moved.append(quarantine(root, path, T0, "damaged"))

    lock = threading.Lock()
    threads = [threading.Thread(target=move, args=(i,)) for i in range(len(contents))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(moved)) == len(contents)
    assert _kept(root, "state.json") == sorted(contents)


def test_a_folder_in_a_files_place_is_quarantined_twice_in_one_second(tmp_path: Path) -> None:
    path = tmp_path / STATE_DIR / "registry.json"
    places = []
    for mark in (b"one", b"two"):
        path.mkdir(parents=True)
        (path / "inside").write_bytes(mark)
        places.append(quarantine(tmp_path, path, T0, "a folder"))
    assert len(set(places)) == 2
    assert sorted((tmp_path / p / "inside").read_bytes() for p in places) == [b"one", b"two"]
