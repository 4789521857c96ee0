"""Class: one rule for every append-only file, the ledger and the run history alike.

Observed: the ledger refused a damaged or future-schema line and was left byte-identical, while
the run history (`runs/index.jsonl`) was appended to past garbage, non-UTF-8, mistyped and
unknown-key lines. The rule (docs/state.md): nothing is appended after a complete line this
loopx cannot read; the write is refused (exit 4, or 8 for another schema version), the file
is left byte for byte, and `loopx doctor` names the file. Generated: each kind of damaged line,
at any place among good ones, in each file, against the write that appends to it.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.errors import ExitCode, LoopxError
from loopx_core.kernel.algebra import StepKind
from loopx_core.ops import spend
from tests.builders import build_project, settle_turn
from tests.conftest import T0, run_loopx


def _good_line(path: Path) -> dict[str, object]:
    return json.loads(path.read_bytes().splitlines()[0])


DAMAGE = {
    "garbage": (lambda good: b"{not json", ExitCode.STATE_INVALID),
    "not utf-8": (lambda good: b'{"x": "\xff\xfe"}', ExitCode.STATE_INVALID),
    "mistyped": (lambda good: json.dumps({**good, "at": 7}).encode(), ExitCode.STATE_INVALID),
    "unknown key": (lambda good: json.dumps({**good, "surprise": 1}).encode(), ExitCode.STATE_INVALID),
    "future schema": (
        lambda good: json.dumps({**good, "schema_version": 2}).encode(),
        ExitCode.SCHEMA_UNSUPPORTED,
    ),
    # no object, so no schema_version: as every reader of a LoopX file says, of no version it reads
    "not an object": (lambda good: b"[1, 2]", ExitCode.SCHEMA_UNSUPPORTED),
}


def _append(store: object, which: str) -> None:
    """The write that appends to `which`: a spend (ledger) or a writeback (run history)."""
    if which == "ledger":
        spend.spend(store, "g", "builder", T0, slots=1)  # type: ignore[arg-type]
    else:
        settle_turn(store, "third", "t3", steps=(StepKind.VALIDATION, StepKind.DURABLE_WRITEBACK))  # type: ignore[arg-type]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    which=st.sampled_from(["ledger", "run history"]),
    damage=st.sampled_from(sorted(DAMAGE)),
    blank=st.booleans(),
)
def test_nothing_is_appended_after_a_line_this_loopx_cannot_read(
    tmp_path: Path, which: str, damage: str, blank: bool
) -> None:
    """The damaged line is appended after the good ones (what a crash or another writer leaves),
    with or without a blank line after it."""
    root = Path(tempfile.mkdtemp(dir=tmp_path))
    store = build_project(root, agents=("builder", "other", "third"), todo_count=3)
    settle_turn(store, "builder", "t1", slots=1)
    settle_turn(store, "other", "t2", slots=1)
    path = store.ledger_path("g") if which == "ledger" else store.runs_dir("g") / "index.jsonl"
    path = Path(path)
    lines = path.read_bytes().splitlines()
    make, code = DAMAGE[damage]
    lines.append(make(_good_line(path)))
    if blank:
        lines.append(b"")
    path.write_bytes(b"\n".join(lines) + b"\n")
    before = path.read_bytes()
    with pytest.raises(LoopxError) as refused:
        _append(store, which)
    assert refused.value.exit_code == code, refused.value.message
    assert path.read_bytes() == before
    doctor = run_loopx("doctor", "-f", "json", root=root)
    found = json.loads(doctor.stdout)["findings"]
    assert any(f["code"] in ("ledger_invalid", "schema_unsupported") for f in found), found


@pytest.mark.parametrize("which", ["ledger", "run history"])
@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_doctor_finds_a_damaged_line_anywhere(tmp_path: Path, which: str, damage: str) -> None:
    """A line damaged in the middle (a hand edit) lies before what the receipt index has read:
    the next append does not re-read it, `loopx doctor` (which reads every line) names it."""
    store = build_project(tmp_path, todo_count=3)
    settle_turn(store, "builder", "t1", slots=1)
    settle_turn(store, "other", "t2", slots=1)
    path = Path(store.ledger_path("g") if which == "ledger" else store.runs_dir("g") / "index.jsonl")
    lines = path.read_bytes().splitlines()
    lines.insert(1, DAMAGE[damage][0](_good_line(path)))
    path.write_bytes(b"\n".join(lines) + b"\n")
    doctor = run_loopx("doctor", "-f", "json", root=tmp_path)
    found = json.loads(doctor.stdout)["findings"]
    assert any(f["code"] in ("ledger_invalid", "schema_unsupported") for f in found), found
