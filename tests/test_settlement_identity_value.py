"""`SettlementIdentity` is a value: what its docstring promises, on generated identities.

It binds exactly one of a todo or a replan obligation (anything else is a usage error, exit
2); it is immutable (assigning or deleting a field raises and changes nothing); equal and
hashable by its fields; it survives pickling (a
`ProcessPoolExecutor` or `multiprocessing` hand-off) with the same effect id; its repr names
every field; and its effect id is the sha256 of its canonical JSON (hashlib's answer).
"""

from __future__ import annotations

import hashlib
import json
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loopx_core.errors import ExitCode, UsageError
from loopx_core.models.identity import TURN_KEY_PREFIX, SettlementIdentity, check_turn_key

WORDS = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)


@st.composite
def identities(draw: st.DrawFn) -> SettlementIdentity:
    """An identity for a todo or for a replan obligation."""
    goal, agent, turn, subject = (draw(WORDS) for _ in range(4))
    if draw(st.booleans()):
        return SettlementIdentity(goal, agent, subject, turn)
    return SettlementIdentity(goal, agent, None, turn, subject)


@given(WORDS, WORDS, st.one_of(st.none(), WORDS), st.one_of(st.none(), WORDS))
def test_exactly_one_subject_is_bound(goal: str, agent: str, todo: str | None, replan: str | None) -> None:
    if (todo is None) == (replan is None):
        with pytest.raises(UsageError) as caught:
            SettlementIdentity(goal, agent, todo, "ti-1", replan)
        assert (
            caught.value.message
            == "a settlement identity binds exactly one of todo_id or replan_obligation_id"
        )
        assert caught.value.exit_code == ExitCode.USAGE
    else:
        identity = SettlementIdentity(goal, agent, todo, "ti-1", replan)
        assert (identity.todo_id, identity.replan_obligation_id) == (todo, replan)


@given(identities(), st.sampled_from([*SettlementIdentity._fields, "other"]), WORDS)
def test_an_identity_cannot_be_changed(identity: SettlementIdentity, field: str, value: str) -> None:
    before = identity.to_json()
    with pytest.raises(AttributeError):
        setattr(identity, field, value)
    with pytest.raises(AttributeError):
        delattr(identity, field)
    assert identity.to_json() == before


@given(identities(), identities())
def test_equal_and_hashed_by_fields_alone(one: SettlementIdentity, other: SettlementIdentity) -> None:
    twin = SettlementIdentity(**one.to_json())
    assert twin == one and hash(twin) == hash(one) and twin is not one
    assert len({one, twin}) == 1
    assert (one == other) == (one.to_json() == other.to_json())
    assert (one != other) == (one.to_json() != other.to_json())
    assert one != one.to_json()


@given(identities())
def test_pickled_and_shown_whole(identity: SettlementIdentity) -> None:
    back = pickle.loads(pickle.dumps(identity))
    assert back == identity and type(back) is SettlementIdentity
    assert back.effect_id == identity.effect_id and back.turn_key == identity.turn_key
    shown = repr(identity)
    assert shown.startswith("SettlementIdentity(") and shown.endswith(")")
    for field, value in identity.to_json().items():
        assert f"{field}={value!r}" in shown
    assert eval(shown, {"SettlementIdentity": SettlementIdentity}) == identity


@given(identities())
def test_the_effect_id_is_the_canonical_jsons_sha256(identity: SettlementIdentity) -> None:
    canonical = json.dumps(identity.to_json(), sort_keys=True, separators=(",", ":"))
    assert identity.effect_id == hashlib.sha256(canonical.encode()).hexdigest()
    assert identity.turn_key == TURN_KEY_PREFIX + identity.effect_id
    assert check_turn_key(identity.turn_key) == identity.effect_id
