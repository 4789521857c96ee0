"""The enum stand-ins behave as the enums they replaced: `ExitCode` as an `IntEnum`, the
settlement kinds (`models/kinds.Kind`: `StepKind`, `FailureKind`) as `StrEnum`s.

They left `enum` because it costs every process about 3 ms at start-up (tests/probe.START_UP);
what a caller could see of the change is what these compare, member by member, against an
`IntEnum` / `StrEnum` built from the same names and values.
"""

from __future__ import annotations

import copy
import json
import pickle
from enum import IntEnum, StrEnum

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loopx_core.errors import EXIT_CODES, ExitCode, SettlementError
from loopx_core.kernel.algebra import FAILURE_KINDS, FailureKind
from loopx_core.kernel.plan import STEP_KINDS, StepKind

KINDS = [(StepKind, STEP_KINDS), (FailureKind, FAILURE_KINDS)]
REFERENCE_EXIT = IntEnum("ExitCode", [(code.name, int(code)) for code in EXIT_CODES])


def test_exit_codes_are_numbered_in_order_and_named_once() -> None:
    assert [int(code) for code in EXIT_CODES] == list(range(len(EXIT_CODES)))
    assert len({code.name for code in EXIT_CODES}) == len(EXIT_CODES)
    for code in EXIT_CODES:
        assert getattr(ExitCode, code.name) is code and isinstance(code, int)


@pytest.mark.parametrize("code", EXIT_CODES, ids=lambda code: code.name)
def test_an_exit_code_reads_as_the_intenum_member(code: ExitCode) -> None:
    ref = REFERENCE_EXIT[code.name]
    assert (code == ref, hash(code) == hash(ref), int(code), code.name) == (True, True, int(ref), ref.name)
    assert (str(code), f"{code}", f"{code:>4}", f"{code:x}", str.format("{:d}", code)) == (
        str(ref),
        f"{ref}",
        f"{ref:>4}",
        f"{ref:x}",
        str.format("{:d}", ref),
    )
    assert json.dumps({"exit": code}) == json.dumps({"exit": ref})
    assert repr(code) == repr(ref)
    for again in (pickle.loads(pickle.dumps(code)), copy.copy(code), copy.deepcopy(code)):
        assert (again, again.name, type(again)) == (code, code.name, ExitCode)


@pytest.mark.parametrize(("kind", "members"), KINDS, ids=lambda k: getattr(k, "__name__", ""))
def test_a_kind_reads_as_the_strenum_member(kind: type, members: tuple[str, ...]) -> None:
    reference = StrEnum(kind.__name__, [(m.upper(), str(m)) for m in members])
    assert [str(m) for m in members] == [m.value for m in reference]
    for member in members:
        ref = reference(str(member))
        assert kind(str(member)) is member is getattr(kind, member.upper())
        assert kind(ref) is member  # a StrEnum member (or any equal str) finds its kind
        assert (member == ref, hash(member) == hash(ref), str(member), f"{member}", member.upper()) == (
            True,
            True,
            str(ref),
            f"{ref}",
            ref.name,
        )
        assert json.dumps({member: member}) == json.dumps({ref: ref})
        assert repr(member) == repr(ref)
        for again in (pickle.loads(pickle.dumps(member)), copy.copy(member), copy.deepcopy(member)):
            assert again is member


@given(st.text(max_size=20))
def test_a_kind_refuses_any_other_text_as_strenum_does(text: str) -> None:
    for kind, members in KINDS:
        reference = StrEnum(kind.__name__, [(m.upper(), str(m)) for m in members])
        try:
            expected: object = reference(text).value
        except ValueError as refused:
            with pytest.raises(ValueError) as raised:
                kind(text)
            assert str(raised.value) == str(refused)
        else:
            assert kind(text) == expected


@pytest.mark.parametrize("failure", FAILURE_KINDS, ids=str)
def test_every_failure_kind_has_its_exit_code(failure: FailureKind) -> None:
    error = SettlementError(failure, "refused")
    assert error.exit_code is getattr(ExitCode, failure.upper())
    assert error.to_json()["error"]["exit_code"] == int(error.exit_code)
