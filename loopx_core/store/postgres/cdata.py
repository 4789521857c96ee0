"""The few C types and calls the lean transport uses, from `_ctypes` alone (not the `ctypes` package).

`import ctypes` costs a tick on the team store about 2 ms here (`ctypes/__init__` builds some
thirty types, `ctypes._endian` its byte-swapped structures, and it makes a callback at import);
these are the same `_ctypes` classes and functions, defined as `ctypes/__init__.py` defines
them, so each behaves exactly as its `ctypes` namesake. Only what `libpq.py` and `libc.py`
need; nothing here loads a library (`libc.open_lazily` does).
"""

from __future__ import annotations

from _ctypes import (
    FUNCFLAG_CDECL,
    FUNCFLAG_USE_ERRNO,
    POINTER,
    CFuncPtr,
    Structure,
    _SimpleCData,
    byref,
    dlopen,
    get_errno,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on a tick
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "POINTER",
    "Library",
    "Structure",
    "byref",
    "c_char_p",
    "c_int",
    "c_short",
    "c_uint",
    "c_ulong",
    "c_void_p",
    "callback_type",
    "dlopen",
    "get_errno",
]


def _simple(name: str, code: str, doc: str) -> Any:
    """A `_SimpleCData` type as `ctypes/__init__.py` defines its namesake (`_type_` is its code)."""
    return type(name, (_SimpleCData,), {"_type_": code, "__doc__": doc, "__module__": __name__})


c_int = _simple("c_int", "i", "C `int` (`ctypes.c_int`).")
c_uint = _simple("c_uint", "I", "C `unsigned int` (`ctypes.c_uint`).")
c_short = _simple("c_short", "h", "C `short` (`ctypes.c_short`).")
c_ulong = _simple("c_ulong", "L", "C `unsigned long` (`ctypes.c_ulong`).")
c_char_p = _simple("c_char_p", "z", "C `char *`, as bytes or None (`ctypes.c_char_p`).")
c_void_p = _simple("c_void_p", "P", "C `void *`, as an int or None (`ctypes.c_void_p`).")


def callback_type(restype: Any, *argtypes: Any) -> Any:
    """A C function pointer type that Python callables can become (`ctypes.CFUNCTYPE`)."""

    class CFunctionType(CFuncPtr):
        _argtypes_ = argtypes
        _restype_ = restype
        _flags_ = FUNCFLAG_CDECL

    return CFunctionType


class Library:
    """A loaded C library's functions by name, each bound at first use (`ctypes.CDLL` on a handle).

    `handle` is what `dlopen` gave; a name the library lacks is an `AttributeError`, as in ctypes.
    """

    def __init__(self, handle: int, name: str | None = None, *, use_errno: bool = False) -> None:
        self._handle = handle
        self._name = name

        class _FuncPtr(CFuncPtr):
            _flags_ = FUNCFLAG_CDECL | (FUNCFLAG_USE_ERRNO if use_errno else 0)
            _restype_ = c_int

        self._FuncPtr = _FuncPtr

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        function = self._FuncPtr((name, self))
        function.__name__ = name
        setattr(self, name, function)
        return function

    def __repr__(self) -> str:
        return f"<Library {self._name!r}, handle {self._handle:x}>"
