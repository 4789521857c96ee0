"""Class: a stored file holding NaN or an infinity, anywhere in a free-form JSON value.

They are not JSON. Before, both readers accepted one inside a journal's receipt or host
result; the next rewrite stored `null` in its place (the file changed without a word) and
the CLI refused to print it as an internal error. Now the one reader refuses such a file
(`StateInvalidError`, exit 4),
and a command that meets it leaves every byte as it was. Finite numbers in the same places
stay accepted, with the same values.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.errors import ExitCode, StateInvalidError
from loopx_core.settlement.turns import begin_turn
from loopx_core.store.files import FileStore
from tests.builders import build_project
from tests.conftest import T0, T0_ISO, run_loopx

MARK = "\x00mark\x00"
"""Stands for the non-finite literal until the document is written."""
INSPECT = ("turn", "inspect-journal", "-g", "g", "-a", "builder", "-k")
SETTLE = ("writeback", "-g", "g", "-a", "builder", "--summary", "s", "--validation-status", "passed", "-k")
NONFINITE = ["NaN", "Infinity", "-Infinity", "1e999", "-1e999"]
FINITE = st.floats(allow_nan=False, allow_infinity=False) | st.integers(-(2**53), 2**53)
FREE = st.recursive(
    FINITE | st.none() | st.booleans() | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)


def with_mark(value: Any, draw: st.DrawFn) -> Any:
    """`value` with MARK at one drawn place (a list item, a dict value, or the value itself)."""
    if isinstance(value, list) and (not value or draw(st.booleans())):
        index = draw(st.integers(0, len(value)))
        return [*value[:index], MARK, *value[index:]]
    if isinstance(value, list):
        index = draw(st.integers(0, len(value) - 1))
        return [*value[:index], with_mark(value[index], draw), *value[index + 1 :]]
    if isinstance(value, dict) and value and draw(st.booleans()):
        key = draw(st.sampled_from(sorted(value)))
        return {**value, key: with_mark(value[key], draw)}
    if isinstance(value, dict):
        return {**value, "x" + draw(st.text(max_size=3)): MARK}
    return MARK


@st.composite
def free_objects(draw: st.DrawFn, *, marked: bool) -> dict[str, Any]:
    """A free-form JSON object (a receipt's shape), with MARK somewhere inside when `marked`."""
    value = draw(st.dictionaries(st.text(max_size=4), FREE, max_size=3))
    return with_mark(value, draw) if marked else value


@pytest.fixture(scope="module")
def journal_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[FileStore, str, Path]:
    """A project with one open turn: its store, turn key and journal path."""
    store = build_project(tmp_path_factory.mktemp("nonfinite"))
    journal, _ = begin_turn(store, "g", "builder", T0, todo_id="t1")
    return store, journal.turn_key, store.turn_path("g", journal.turn_key)


def document(path: Path, field: str, value: dict[str, Any], literal: str) -> bytes:
    """The journal at `path` with `value` as its `field` (receipt or host_result), MARK as `literal`."""
    doc = json.loads(path.read_bytes())
    doc["phases"], doc["host_result"] = [], None
    if field == "receipt":
        doc["phases"] = [{"phase": "host_execute", "at": T0_ISO, "receipt": value}]
    else:
        doc["host_result"] = value
    return json.dumps(doc).replace(json.dumps(MARK), literal).encode()


def refusal(read: Any) -> tuple[str, str]:
    """The error class and message `read()` raises (it must refuse)."""
    with pytest.raises(StateInvalidError) as caught:
        read()
    return type(caught.value).__name__, caught.value.message


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    field=st.sampled_from(["receipt", "host_result"]),
    value=free_objects(marked=True),
    literal=st.sampled_from(NONFINITE),
)
def test_the_reader_refuses_a_nonfinite_number_anywhere(
    journal_file: tuple[FileStore, str, Path], field: str, value: dict[str, Any], literal: str
) -> None:
    store, key, path = journal_file
    data = document(path, field, value, literal)
    assert literal.encode() in data
    path.write_bytes(data)
    says = refusal(lambda: store.read_journal("g", key))
    assert "not JSON" in says[1] and str(path.parent) not in says[1]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(field=st.sampled_from(["receipt", "host_result"]), value=free_objects(marked=False))
def test_finite_numbers_stay_accepted_with_the_same_values(
    journal_file: tuple[FileStore, str, Path], field: str, value: dict[str, Any]
) -> None:
    store, key, path = journal_file
    path.write_bytes(document(path, field, value, "null"))
    read = store.read_journal("g", key)
    kept = read.phases[0].receipt if field == "receipt" else read.host_result
    assert kept == value


@pytest.mark.parametrize("literal", ["NaN", "-Infinity", "1e999"])
def test_commands_refuse_it_and_leave_the_file_as_it_was(tmp_path: Path, literal: str) -> None:
    store = build_project(tmp_path)
    journal, _ = begin_turn(store, "g", "builder", T0, todo_id="t1")
    path = store.turn_path("g", journal.turn_key)
    data = document(path, "receipt", {"notes": [MARK, None, {"k": "v"}]}, literal)
    path.write_bytes(data)
    key = journal.turn_key
    for command in (INSPECT, SETTLE):
        args = [*command, key]
        result = run_loopx(*args, "-f", "json", root=tmp_path)
        assert result.exit_code == ExitCode.STATE_INVALID, (args, result.stderr)
        assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
        assert json.loads(result.stdout)["error"]["code"] == "state_invalid"
        assert path.read_bytes() == data  # never rewritten with `null` in its place
