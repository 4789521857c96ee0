"""Mutants of loopx_core/store/receipts.py that the in-process suite let live (docs/testing.md).

Retries found their receipt only in subprocess tests, which mutants never reach: here the same
promises run in-process. A retried spend or void answers the first event; an index that is
damaged, stale or points at the wrong line is rebuilt from the ledger; one written by another
loopx (another schema version) is refused and left byte for byte.
"""

from __future__ import annotations

import json

import pytest

from loopx_core.errors import SchemaUnsupportedError
from loopx_core.ops import goals, spend
from tests.conftest import T0, Project


@pytest.fixture
def goal(project: Project) -> Project:
    """Goal `g`, agent `builder`, and two spends bound to turns t-1 and t-2."""
    goals.add_goal(project.store, "g", "Objective", T0)
    goals.register_agent(project.store, "builder", [], T0)
    spend.spend(project.store, "g", "builder", T0, slots=1, turn_instance_id="t-1")
    spend.spend(project.store, "g", "builder", T0, slots=2, turn_instance_id="t-2")
    return project


def ledger_lines(project: Project) -> list[dict[str, object]]:
    """The goal's ledger, parsed."""
    return [json.loads(line) for line in project.store.ledger_path("g").read_text().splitlines()]


def test_a_retried_spend_answers_the_first_event(goal: Project) -> None:
    first = goal.store.spend_receipt("g", "t-2")
    assert first is not None and (first.event_id, first.slots) == ("ev-2", 2)
    again = spend.spend(goal.store, "g", "builder", goal.at(90), slots=5, turn_instance_id="t-2")
    assert again.replayed and again.event == first
    assert len(ledger_lines(goal)) == 2
    assert goal.store.spend_receipt("g", "t-3") is None


def test_a_retried_void_answers_the_first_void(goal: Project) -> None:
    assert goal.store.void_receipt("g", "ev-1") is None
    voided = spend.void(goal.store, "g", "ev-1", goal.at(1))
    assert not voided.replayed and voided.event.voids_event_id == "ev-1"
    again = spend.void(goal.store, "g", "ev-1", goal.at(2))
    assert again.replayed and again.event == voided.event
    assert goal.store.void_receipt("g", "ev-1") == voided.event
    assert goal.store.void_receipt("g", "ev-2") is None
    assert [e["kind"] for e in ledger_lines(goal)] == ["spend", "spend", "void"]


@pytest.mark.parametrize(
    "damage",
    [
        b"",
        b"{not json",
        b"[1, 2]",
        b'{"schema_version": 1, "ledger_offset": -5}',
        b'{"schema_version": 1, "ledger_offset": 0, "spends": {"t-2": 0}}',  # points at t-1's line
        b'{"schema_version": 1, "ledger_offset": 999999}',  # past the end: the ledger was replaced
    ],
    ids=["empty", "not-json", "not-object", "negative-offset", "wrong-line", "past-the-end"],
)
def test_a_damaged_or_stale_index_is_rebuilt_from_the_ledger(goal: Project, damage: bytes) -> None:
    goal.store.receipts_path("g").write_bytes(damage)
    found = goal.store.spend_receipt("g", "t-2")
    assert found is not None and (found.event_id, found.turn_instance_id) == ("ev-2", "t-2")
    rebuilt = json.loads(goal.store.receipts_path("g").read_text())
    assert rebuilt["schema_version"] == 1
    assert rebuilt["ledger_offset"] == goal.store.ledger_path("g").stat().st_size
    first_line = goal.store.ledger_path("g").read_bytes().index(b"\n") + 1
    assert rebuilt["spends"] == {"t-1": 0, "t-2": first_line}


@pytest.mark.parametrize("version", [2, "1", None])
def test_an_index_of_another_schema_is_refused_and_left_unchanged(goal: Project, version: object) -> None:
    body = {"ledger_offset": 0} if version is None else {"schema_version": version, "ledger_offset": 0}
    path = goal.store.receipts_path("g")
    path.write_text(json.dumps(body))
    before = path.read_bytes()
    with pytest.raises(SchemaUnsupportedError):
        goal.store.spend_receipt("g", "t-1")
    assert path.read_bytes() == before


def sources(project: Project):  # type: ignore[no-untyped-def]
    """The receipt index's sources of goal `g`."""
    return project.store._receipt_sources("g")


def test_a_spend_is_found_whatever_the_run_history_holds(goal: Project) -> None:
    """A spend's lookup reads the ledger only: a history of another schema does not stop it."""
    history = goal.store.runs_dir("g") / "index.jsonl"
    history.parent.mkdir(parents=True, exist_ok=True)
    history.write_text('{"schema_version": 2, "run_id": "r1"}\n')
    found = goal.store.spend_receipt("g", "t-1")
    assert found is not None and found.event_id == "ev-1"


def test_an_index_that_keeps_pointing_at_another_line_is_refused_in_words(goal: Project) -> None:
    from loopx_core.errors import StateInvalidError
    from loopx_core.store import receipts

    with pytest.raises(StateInvalidError) as caught:
        receipts._event(sources(goal), lambda index: 0, "turn_instance_id", "t-2")
    assert str(caught.value) == "receipt index of .loopx/goals/g/events.jsonl disagrees with the ledger"


def test_a_ledger_that_cannot_be_read_at_an_offset_is_refused_naming_it(goal: Project) -> None:
    from loopx_core.errors import StateInvalidError
    from loopx_core.store import receipts

    src = sources(goal)
    src.ledger.unlink()
    src.ledger.mkdir()
    with pytest.raises(StateInvalidError) as caught:
        receipts._event_at(src, 0)
    assert str(caught.value) == (
        "ledger at .loopx/goals/g/events.jsonl is a folder, not a regular file: move it aside (`loopx doctor` reports it)"
    )


def test_a_damaged_ledger_line_met_while_indexing_is_refused_naming_the_ledger(goal: Project) -> None:
    from loopx_core.errors import StateInvalidError

    goal.store.receipts_path("g").unlink()  # the next lookup indexes the ledger from its start
    ledger = goal.store.ledger_path("g")
    ledger.write_text(ledger.read_text() + '{"schema_version": 1, "seq": "x"}\n')
    with pytest.raises(StateInvalidError) as caught:
        goal.store.spend_receipt("g", "t-1")
    assert str(caught.value).startswith("a line of the ledger at .loopx/goals/g/events.jsonl is invalid at ")


def test_a_run_in_the_history_is_indexed_by_its_id(goal: Project) -> None:
    from loopx_core.store import receipts

    history = goal.store.runs_dir("g") / "index.jsonl"
    history.parent.mkdir(parents=True, exist_ok=True)
    line = {
        "schema_version": 1,
        "run_id": "run-7",
        "at": "2026-11-29T12:00:00Z",
        "agent_id": "builder",
        "turn_key": "k",
        "validation": "passed",
        "summary": "s",
    }
    history.write_text(json.dumps(line) + "\n\n" + json.dumps({**line, "run_id": "run-9"}) + "\n")
    assert receipts.run_indexed(sources(goal), "run-7") and receipts.run_indexed(sources(goal), "run-9")
    assert not receipts.run_indexed(sources(goal), "run-8")


def test_a_damaged_history_line_met_while_indexing_is_refused_naming_the_history(goal: Project) -> None:
    from loopx_core.errors import StateInvalidError
    from loopx_core.store import receipts

    history = goal.store.runs_dir("g") / "index.jsonl"
    history.parent.mkdir(parents=True, exist_ok=True)
    history.write_text('{"schema_version": 1, "run_id": 3}\n')
    with pytest.raises(StateInvalidError) as caught:
        receipts.run_indexed(sources(goal), "run-7")
    assert str(caught.value).startswith(
        "a line of the run history at .loopx/goals/g/runs/index.jsonl is invalid at "
    )
