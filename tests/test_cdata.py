"""Class: `store.postgres.cdata` behaves as the `ctypes` names it stands in for.

The lean transport builds its C types and calls from `_ctypes` alone, so a tick on the team
store never imports the `ctypes` package (about 2 ms). Each stand-in is compared here with
its `ctypes` namesake on generated values: sizes and layouts, what a value becomes and comes
back as, what each refuses and with which exception, calls into the C library with their
errno, and callbacks.
"""

from __future__ import annotations

import ctypes
import errno
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loopx_core.store.postgres import cdata, libc

SIMPLE = {
    "c_int": st.integers(-(2**70), 2**70),
    "c_uint": st.integers(-(2**70), 2**70),
    "c_short": st.integers(-(2**40), 2**40),
    "c_ulong": st.integers(-(2**70), 2**70),
    "c_char_p": st.one_of(
        st.none(), st.binary(max_size=40).map(lambda b: b.replace(b"\x00", b"")), st.text()
    ),
    "c_void_p": st.one_of(st.none(), st.integers(0, 2**64 - 1), st.integers(-(2**70), 2**70), st.text()),
}


def outcome(make: object, value: object) -> tuple[str, object]:
    """What constructing a C value from `value` gives: its value back, or the exception's type."""
    try:
        return "value", make(value).value  # type: ignore[operator]
    except Exception as error:
        return "refused", type(error).__name__


@pytest.mark.parametrize("name", sorted(SIMPLE))
def test_each_simple_type_is_ctypes_own_layout(name: str) -> None:
    ours, theirs = getattr(cdata, name), getattr(ctypes, name)
    assert ours._type_ == theirs._type_
    assert ctypes.sizeof(ours) == ctypes.sizeof(theirs)
    assert ctypes.alignment(ours) == ctypes.alignment(theirs)
    assert ours().value == theirs().value


@pytest.mark.parametrize("name", sorted(SIMPLE))
@given(data=st.data())
def test_each_simple_type_takes_and_gives_values_as_ctypes_does(name: str, data: st.DataObject) -> None:
    value = data.draw(SIMPLE[name])
    assert outcome(getattr(cdata, name), value) == outcome(getattr(ctypes, name), value)


class Ours(cdata.Structure):
    _fields_ = (("a", cdata.c_short), ("p", cdata.c_char_p), ("n", cdata.c_int), ("v", cdata.c_void_p))


class Theirs(ctypes.Structure):
    _fields_ = (("a", ctypes.c_short), ("p", ctypes.c_char_p), ("n", ctypes.c_int), ("v", ctypes.c_void_p))


def test_a_structure_of_stand_ins_has_ctypes_layout() -> None:
    assert ctypes.sizeof(Ours) == ctypes.sizeof(Theirs)
    for field, _ in Theirs._fields_:
        assert getattr(Ours, field).offset == getattr(Theirs, field).offset


@given(
    a=st.integers(-(2**15), 2**15 - 1),
    p=st.one_of(st.none(), st.binary(max_size=20).map(lambda b: b.replace(b"\x00", b"x"))),
    n=st.integers(-(2**31), 2**31 - 1),
)
def test_a_structure_and_its_pointer_read_back_as_ctypes_do(a: int, p: bytes | None, n: int) -> None:
    ours, theirs = Ours(a, p, n, None), Theirs(a, p, n, None)
    assert bytes(ours) == bytes(theirs) or p is not None  # the pointer field differs in address only
    assert (ours.a, ours.p, ours.n, ours.v) == (theirs.a, theirs.p, theirs.n, theirs.v)
    pointer = cdata.POINTER(Ours)(ours)
    assert (pointer[0].a, pointer[0].p, pointer[0].n) == (a, p, n)
    array = (cdata.c_char_p * 3)(p, b"two", None)
    assert list(array) == list((ctypes.c_char_p * 3)(p, b"two", None))


def test_the_c_library_s_functions_answer_as_through_ctypes() -> None:
    ours = libc._libc()
    theirs = ctypes.CDLL(None, use_errno=True)
    for lib, text in ((ours, cdata.c_char_p), (theirs, ctypes.c_char_p)):
        lib.strlen.restype, lib.strlen.argtypes = ctypes.c_size_t, [text]
    for value in (b"", b"loopx", b"a" * 1000):
        assert ours.strlen(value) == theirs.strlen(value) == len(value)
    assert ours.getpid() == theirs.getpid() == os.getpid()
    assert ours.strlen is ours.strlen  # bound once, as ctypes does


@pytest.mark.parametrize("name", ["no_such_function_in_libc", "__wrapped__"])
def test_a_name_the_library_lacks_is_an_attribute_error_as_in_ctypes(name: str) -> None:
    for lib in (libc._libc(), ctypes.CDLL(None)):
        with pytest.raises(AttributeError):
            getattr(lib, name)


def test_errno_is_kept_for_the_caller_as_ctypes_keeps_it() -> None:
    ours = libc._libc()
    ours.close.restype, ours.close.argtypes = cdata.c_int, [cdata.c_int]
    assert ours.close(-1) == -1
    assert cdata.get_errno() == ctypes.get_errno() == errno.EBADF


@given(st.lists(st.binary(max_size=30).map(lambda b: b.replace(b"\x00", b"")), max_size=5))
def test_a_callback_gets_its_arguments_as_a_ctypes_callback_does(messages: list[bytes]) -> None:
    heard: list[tuple[object, object]] = []
    ours = cdata.callback_type(None, cdata.c_void_p, cdata.c_char_p)(lambda arg, m: heard.append((arg, m)))
    theirs = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p)(lambda arg, m: heard.append((arg, m)))
    for message in messages:
        ours(None, message)
        theirs(None, message)
    assert heard == [(None, m) for m in messages for _ in range(2)]


def test_a_library_that_is_no_library_is_an_os_error(tmp_path: object) -> None:
    with pytest.raises(OSError):
        cdata.dlopen(os.path.join(str(tmp_path), "absent.so"), os.RTLD_LOCAL)
