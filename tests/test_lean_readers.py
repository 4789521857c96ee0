"""The generated lean readers: current with the models, and in agreement with pydantic.

Property: for every stored file kind and any document (a valid one, mutated anywhere: a value
replaced by any JSON value, a key dropped or added, non-finite numbers, odd time spellings),
the lean reader (a) when it is sure on its own, is right: pydantic accepts the document with the
same values; (b) with its pydantic fallback, accepts and refuses exactly what `read_model`
does, with the same error class (so the same exit code) and the same message.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from loopx_core import clock
from loopx_core.errors import LoopxError
from loopx_core.models import lean
from loopx_core.store import lean as lean_store
from tests.conftest import REPO
from tests.lean_documents import (
    SCALARS,
    SEEDS,
    TURN_KEY,
    VALUES,
    documents,
    outcome,
    pydantic_outcome,
    typed,
)

NAN_RECEIPT = json.dumps(SEEDS["TurnJournal"]).replace("[1.5, null", "[NaN, null").encode()
"""Found by the property: both readers accepted a NaN in a receipt (now both refuse it)."""


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents())
@example(("TurnJournal", NAN_RECEIPT))
def test_lean_and_pydantic_accept_and_refuse_the_same_files(case: tuple[str, bytes]) -> None:
    name, data = case
    expected = pydantic_outcome(name, data)
    try:
        sure = lean.CHECKERS[name](lean.loads(data))
    except (lean.Doubt, ValueError, RecursionError):
        sure = None
    if sure is not None:  # the lean reader decided alone: pydantic agrees, with the same values
        assert expected == ("ok", typed(lean.dump(sure)))
    assert outcome(lambda: lean_store.parse(data, name, where="f.json", what="file")) == expected
    if data == NAN_RECEIPT:
        assert expected[:2] == ("refused", "StateInvalidError") and "not JSON" in expected[2]


@pytest.mark.parametrize("name", sorted(SEEDS))
def test_lean_reader_decides_the_canonical_files_alone(name: str) -> None:
    data = json.dumps(SEEDS[name]).encode()
    assert typed(lean.dump(lean.CHECKERS[name](lean.loads(data)))) == pydantic_outcome(name, data)[1]


def test_lean_objects_keep_the_models_methods() -> None:
    state = lean.CHECKERS["GoalState"](lean.loads(json.dumps(SEEDS["GoalState"])))
    assert (
        state.todo("t1").is_open_work
        and state.todo("nope") is None
        and state.gate("gate1").title == "Approve"
    )
    journal = lean.CHECKERS["TurnJournal"](lean.loads(json.dumps(SEEDS["TurnJournal"])))
    assert journal.settlement_identity().turn_key.startswith("sha256:") and journal.completed() == [
        "host_execute"
    ]
    registry = lean.CHECKERS["Registry"](lean.loads(json.dumps(SEEDS["Registry"])))
    assert registry.goals["g"].quota.allowed_slots == 720


def test_generated_module_is_current() -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "gen_lean_readers.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr


def test_lean_module_imports_no_pydantic() -> None:
    code = "import sys, loopx_core.store.lean; print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'pydantic_core')))"
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=Path(REPO)
    )
    assert proc.stdout.strip() == "[]"


@settings(max_examples=800, deadline=None)
@given(
    st.one_of(
        st.datetimes(timezones=st.timezones()),
        st.datetimes(
            min_value=datetime(1969, 12, 30), max_value=datetime(1970, 1, 2), timezones=st.timezones()
        ),
        st.datetimes(
            min_value=datetime(2999, 12, 30), max_value=datetime(3000, 1, 2), timezones=st.timezones()
        ),
    )
)
def test_clock_range_check_is_the_input_domains(value: datetime) -> None:
    """`parse_time` decides in-range times without pydantic: exactly what `check(InputTime)` gives."""
    from loopx_core.models.domain import InputTime, check

    text = value.isoformat()
    try:
        expected: tuple[Any, ...] = (
            "ok",
            check("t", InputTime, datetime.fromisoformat(text)).astimezone(UTC),
        )
    except LoopxError:
        expected = ("refused",)
    try:
        got: tuple[Any, ...] = ("ok", clock.parse_time(text, what="t"))
    except LoopxError:
        got = ("refused",)
    assert got == expected and (got[0] == "refused" or got[1].utcoffset() == timedelta(0))


@pytest.mark.parametrize(
    "damage", ["none", "registry", "state", "scheduler", "ledger", "journal", "history", "newer"]
)
def test_lean_file_store_reads_as_the_file_store(tmp_path: Path, damage: str) -> None:
    """Every read a tick makes gives the same values, or the same error, through either store."""
    from loopx_core.store.files import FileStore

    store = FileStore(tmp_path)
    dot = tmp_path / ".loopx" / "goals" / "g"
    (dot / "turns").mkdir(parents=True)
    (tmp_path / ".loopx" / "registry.json").write_text(json.dumps(SEEDS["Registry"]))
    (dot / "state.json").write_text(json.dumps(SEEDS["GoalState"]))
    (dot / "scheduler.json").write_text(json.dumps(SEEDS["SchedulerState"]))
    (dot / "events.jsonl").write_text(json.dumps(SEEDS["LedgerEvent"]) + "\n")
    (dot / "turns" / f"{TURN_KEY[7:]}.json").write_text(json.dumps(SEEDS["TurnJournal"]))
    (dot / "runs").mkdir()
    older = {**SEEDS["RunIndexEntry"], "run_id": "run-0", "todo_id": None}
    (dot / "runs" / "index.jsonl").write_text(f"{json.dumps(older)}\n{json.dumps(SEEDS['RunIndexEntry'])}\n")
    broken = {
        "registry": tmp_path / ".loopx" / "registry.json",
        "state": dot / "state.json",
        "scheduler": dot / "scheduler.json",
        "ledger": dot / "events.jsonl",
        "journal": dot / "turns" / f"{TURN_KEY[7:]}.json",
        "history": dot / "runs" / "index.jsonl",
    }
    if damage == "newer":
        (dot / "state.json").write_text(json.dumps({**SEEDS["GoalState"], "schema_version": 2}))
    elif damage != "none":
        broken[damage].write_text('{"schema_version": 1, "x": \n')  # a whole line: no torn tail
    reads = {
        "registry": lambda s: s.read_registry(),
        "goal": lambda s: s.read_goal("g"),
        "scheduler": lambda s: s.read_scheduler("g"),
        "ledger": lambda s: s.ledger_since("g", datetime(2026, 1, 1, tzinfo=UTC)),
        "journal": lambda s: s.read_journal("g", TURN_KEY),
        "no scheduler": lambda s: s.read_scheduler("other"),
        "history": lambda s: s.read_history("g"),
        "last run": lambda s: s.read_history("g", last=1),
        "no history": lambda s: s.read_history("other"),
    }
    refused = []
    for name, read in reads.items():
        lean_read = outcome(lambda read=read: read(lean_store.for_reading(store)))
        assert lean_read == outcome(lambda read=read: lean_store.from_model(read(store))), name
        refused += [lean_read[1]] if lean_read[0] == "refused" else []
    expected = {"none": [], "newer": ["SchemaUnsupportedError"], "history": ["StateInvalidError"] * 2}
    assert refused == expected.get(damage, ["StateInvalidError"])


COUNTERS = st.one_of(
    st.builds(lambda n: json.dumps({"blocks": n}).encode(), SCALARS | VALUES),
    st.builds(lambda doc: json.dumps(doc).encode(), VALUES),
    st.builds(
        lambda n, k, v: json.dumps({"blocks": n, k: v}).encode(),
        st.integers(0, 9),
        st.text(max_size=3),
        VALUES,
    ),
    st.sampled_from([b'{"blocks":1}', b'{"blocks": 1e0}', b'{"blocks":NaN}', b"\xff", b"", b'{"blocks":01}']),
)


@settings(max_examples=600, deadline=None)
@given(COUNTERS)
def test_stop_counter_is_read_as_its_model_reads_it(data: bytes) -> None:
    """The Claude Stop hook's counter (plugins/loopx_claude_code/lean.py, generated): the same blocks
    as `StopCounter` or refused alike; when the lean reader decides alone, pydantic agrees."""
    from pydantic import ValidationError

    from loopx_claude_code import lean as counter_lean
    from loopx_claude_code.events import parse_counter
    from loopx_claude_code.models import StopCounter

    try:
        expected: int | None = StopCounter.model_validate_json(data).blocks
    except (ValidationError, ValueError):
        expected = None
    try:
        sure = counter_lean.CHECKERS["StopCounter"](counter_lean.loads(data)).blocks
    except (lean.Doubt, ValueError, RecursionError):
        sure = None
    assert sure is None or sure == expected
    assert parse_counter(data) == expected


@given(st.integers(0, 1_000_000))
def test_stop_counter_is_written_as_its_model_dumps_it(blocks: int) -> None:
    from loopx_claude_code.events import counter_bytes
    from loopx_claude_code.models import StopCounter

    assert counter_bytes(blocks) == StopCounter(blocks=blocks).model_dump_json().encode()


ROW_KINDS = ["LedgerEvent", "RunIndexEntry", "GoalState"]
"""Two kinds with a line form (a ledger window, a run history) and one without."""


def rows_of(name: str) -> st.SearchStrategy[tuple[str, list[str]]]:
    """Rows of one kind: mutated seeds, as json.dumps writes them or compact as LoopX does."""
    text = st.tuples(documents(name), st.booleans()).map(
        lambda case: (
            json.dumps(json.loads(case[0][1]), separators=(",", ":")) if case[1] else case[0][1].decode()
        )
    )
    return st.tuples(st.just(name), st.lists(text, max_size=6))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(ROW_KINDS).flatmap(rows_of))
def test_a_batch_of_rows_reads_as_each_row_alone(case: tuple[str, list[str]]) -> None:
    """`parse_all` (a PostgreSQL window's rows, the line form's lookups made once) accepts and
    refuses what `parse` does row by row: the same values, or the first row's refusal."""
    name, texts = case

    def each() -> list[Any]:
        return [lean_store.parse(text.encode(), name, where="w", what="row") for text in texts]

    def batch() -> list[Any]:
        return lean_store.parse_all(texts, name, where="w", what="row")

    def values(read: Any) -> Any:
        try:
            return ("ok", [typed(lean.dump(item)) for item in read()])
        except LoopxError as error:
            return ("refused", type(error).__name__, error.message)

    assert values(batch) == values(each)
