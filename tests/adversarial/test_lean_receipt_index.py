"""Class: the receipt index read and written without pydantic is pydantic's `ReceiptIndex`.

`receipts.lean_index` (the generated checker) may only accept a file pydantic accepts, with the
same values (anything else is None: pydantic judges); `receipts.encode` (the generated writer,
pydantic on doubt) writes the bytes pydantic's dump writes.
Generated documents (near-misses of every field's type and range, extra keys, duplicate
keys, JSON pydantic reads otherwise) and generated values (any text as a key).
"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from loopx_core.models import lean
from loopx_core.store.receipt_index import ReceiptIndex
from loopx_core.store.receipts import encode, fresh, lean_index

KEYS = st.text(max_size=6)
OFFSETS = st.integers(0, 2**70)
MAPS = st.dictionaries(KEYS, st.integers(-(2**60), 2**60), max_size=4)
ODD = st.one_of(
    st.none(),
    st.booleans(),
    st.floats(allow_nan=False),
    st.integers(-(2**70), 2**70),
    st.text(max_size=4),
    st.sampled_from(["1", "0", "1.0", " 1"]),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(KEYS, st.one_of(st.integers(), st.text(max_size=2), st.floats(), st.none()), max_size=2),
)
FIELDS = {
    "schema_version": st.one_of(st.just(1), ODD),
    "ledger_offset": st.one_of(OFFSETS, ODD),
    "runs_offset": st.one_of(OFFSETS, ODD),
    "spends": st.one_of(MAPS, ODD),
    "voids": st.one_of(MAPS, ODD),
    "runs": st.one_of(MAPS, ODD),
    "extra": ODD,
}


@st.composite
def documents(draw: st.DrawFn) -> bytes:
    """A receipt index file: usually close to a good one, often broken in one way."""
    chosen = draw(st.sets(st.sampled_from(sorted(FIELDS))))
    doc = {name: draw(FIELDS[name]) for name in sorted(chosen)}
    if draw(st.booleans()):
        doc["schema_version"] = 1
        doc.pop("extra", None)
    text = json.dumps(doc, indent=draw(st.sampled_from([None, 2])), ensure_ascii=draw(st.booleans()))
    form = draw(st.sampled_from(["plain", "duplicate", "nan", "float offset", "truncated"]))
    if form == "duplicate" and len(text) > 2:
        text = text[:-1] + (', "ledger_offset": 7}' if doc else '"ledger_offset": 7}')
    elif form == "nan":
        text = text.replace("1", "NaN", 1)
    elif form == "float offset":
        text = text.replace('"runs_offset": 0', '"runs_offset": 0.0')
    elif form == "truncated":
        text = text[: draw(st.integers(0, len(text)))]
    return text.encode("utf-8", "surrogatepass")


@settings(max_examples=600, deadline=None)
@given(data=documents())
def test_the_lean_reader_accepts_only_what_pydantic_reads_the_same(data: bytes) -> None:
    found = lean_index(data)
    try:
        model = ReceiptIndex.model_validate_json(data)
    except ValidationError:
        assert found is None, data
        return
    if found is not None:
        assert lean.dump(found) == model.model_dump(), data


@settings(max_examples=600, deadline=None)
@given(
    ledger=st.integers(0, 2**62),
    runs_at=st.integers(0, 2**62),
    spends=st.dictionaries(st.text(), st.integers(-(2**62), 2**62), max_size=5),
    voids=MAPS,
    runs=st.dictionaries(st.text(max_size=64), st.integers(0, 2**40), max_size=5),
)
def test_the_lean_writer_writes_pydantics_bytes(
    ledger: int, runs_at: int, spends: dict[str, int], voids: dict[str, int], runs: dict[str, int]
) -> None:
    index = fresh(ledger, runs_at, spends, voids, runs)
    model = ReceiptIndex(**lean.dump(index))
    try:
        expected = model.model_dump_json(indent=2).encode() + b"\n"
    except ValueError:  # a lone surrogate pydantic cannot write: neither may the lean writer
        try:
            encode(index)
        except ValueError:
            return
        raise AssertionError("the lean writer wrote what pydantic refuses") from None
    written = encode(index)
    assert written == expected
    assert lean_index(written) in (None, index)  # and it reads back as written (or pydantic judges)


def test_a_written_index_reads_back_lean() -> None:
    index = fresh(12, 3, {"ti-1": 0}, {"ev-1": 5}, {"run-1": 0})
    assert lean_index(encode(index)) == index
    assert type(lean_index(encode(index))).__module__ == "loopx_core.models.lean"
