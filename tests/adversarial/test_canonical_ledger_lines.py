"""The canonical-line reader of ledger lines (`store.lean.canonical_line`) never disagrees with pydantic.

Class: a fast path that recognises a line by its bytes (one generated regex) instead of parsing
JSON. Property: for any line (a LedgerEvent written as LoopX writes it, with any field dropped
or given an odd value, and then possibly damaged at any byte), (a) when the canonical reader
answers, pydantic accepts the line with exactly the same values; (b) the whole lean read
(`store.lean.parse`) accepts and refuses exactly what pydantic does, with the same error.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from loopx_core.models import lean
from loopx_core.store import lean as lean_store
from tests.lean_documents import SCALARS, SEEDS, TIMES, outcome, pydantic_outcome, typed

FIELDS = tuple(lean.LedgerEvent.__slots__)
WRITTEN = json.dumps(SEEDS["LedgerEvent"], separators=(",", ":")).encode()
"""The seed event as LoopX writes a ledger line (compact, declaration order)."""
ODD: dict[str, list[Any]] = {
    "schema_version": [1, 2, 0, 1.0, "1", True],
    "seq": [1, 0, -1, 2**53 - 1, 2**53, 10**30, 1.0],
    "kind": ["spend", "void", "Spend", "", None],
    "slots": [0, 1, 10**9, 10**9 + 1, -1, 1.5, True],
    "duration_seconds": [0, 42, 42.5, -0.0, 1e308, 32503680000.0, 32503680000.5, 1e-300, 10**20, True],
    "at": TIMES,
}
DAMAGE = [" ", ",", '"', "\\", "{", "}", "0", ".", "e", "-", "\x00", "\n"]
IDS = ["a", "a.b", "a..b", "..", "A", "-a", "x" * 64, "x" * 65, "é", "a\u2028b", ""]


FULL = {**SEEDS["LedgerEvent"], "replan_obligation_id": "r-1", "voids_event_id": "ev-0", "reason": "why"}


@st.composite
def lines(draw: st.DrawFn) -> bytes:
    """A ledger line: every field in order (the optional ones maybe left out), a few changed, maybe damaged."""
    doc = {n: FULL[n] for n in FIELDS if n in SEEDS["LedgerEvent"] or draw(st.booleans())}
    for _ in range(draw(st.integers(0, 2))):
        name = draw(st.sampled_from(FIELDS))
        action = draw(st.sampled_from(["drop", "null", "odd", "odd", "any", "text"]))
        if action == "drop":
            doc.pop(name, None)
        elif action == "null":
            doc[name] = None
        elif action == "odd":
            doc[name] = draw(st.sampled_from(ODD.get(name, IDS)))
        elif action == "any":
            doc[name] = draw(SCALARS)
        else:
            doc[name] = draw(st.text(max_size=6))
    doc = {n: doc[n] for n in FIELDS if n in doc}  # declaration order, as LoopX writes it
    if draw(st.integers(0, 5)) == 0:
        doc = dict(draw(st.permutations(list(doc.items()))))
    text = json.dumps(doc, separators=(",", ":"), ensure_ascii=draw(st.booleans()))
    if draw(st.integers(0, 3)) == 0:  # damage: one character in, or one out
        at = draw(st.integers(0, len(text)))
        if draw(st.booleans()):
            text = text[:at] + draw(st.sampled_from(DAMAGE)) + text[at:]
        else:
            text = text[:at] + text[at + 1 :]
    return text.encode("utf-8", errors="surrogatepass")


def canonical(data: bytes) -> tuple[Any, ...] | None:
    """("ok", values) when the canonical reader answers alone, else None."""
    found = lean_store.canonical_line(data, "LedgerEvent")
    return None if found is None else ("ok", typed(lean.dump(found)))


@settings(max_examples=2500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines())
@example(WRITTEN)
@example(WRITTEN.replace(b'"slots":2', b'"slots":2.0'))
@example(WRITTEN.replace(b'"ev-1"', b'"ev..1"'))
@example(WRITTEN.replace(b"42.5", b"1e999"))
@example(WRITTEN.replace(b"42.5", b"42"))
@example(WRITTEN.replace(b"42.5", b"4.25e1"))
@example(WRITTEN.replace(b"42.5", b"1E-99"))
@example(WRITTEN.replace(b"42.5", b"1e300"))
@example(WRITTEN.replace(b"42.5", b"-0"))
@example(WRITTEN.replace(b"42.5", b"-0.0"))
@example(WRITTEN.replace(b"42.5", b"32503680000.000001"))
@example(WRITTEN.replace(b'"seq":1', b'"seq":9007199254740992'))
@example(WRITTEN.replace(b'"t1"', b'"t\\u0031"'))
def test_canonical_line_agrees_with_pydantic(data: bytes) -> None:
    expected = pydantic_outcome("LedgerEvent", data)
    sure = canonical(data)
    if sure is not None:
        assert sure == expected
    assert outcome(lambda: lean_store.parse(data, "LedgerEvent", where="f.json", what="file")) == expected


def test_the_line_loopx_writes_is_read_by_the_canonical_reader() -> None:
    """The fast path is taken for what LoopX writes (else the property above proves little)."""
    from loopx_core.models.ledger import LedgerEvent

    event = LedgerEvent.model_validate(SEEDS["LedgerEvent"])
    written = event.model_dump_json(exclude_none=True).encode()
    assert canonical(written) == pydantic_outcome("LedgerEvent", written)
    assert canonical(WRITTEN.replace(b'"seq":1', b'"seq": 1')) is None
