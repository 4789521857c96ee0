"""The two things the lean transport asks of the C library itself: a lazy `dlopen` and `poll`.

`ctypes.CDLL` loads a library with `RTLD_NOW`, binding every function of libpq and of the
libraries it needs (OpenSSL, Kerberos, LDAP) before the first call: 2-6 ms here against
under 2 ms with `RTLD_LAZY`, which binds each function at its first call. `poll` waits on
the connection's socket while libpq's handshake goes on, without loading the `select` module.
"""

from __future__ import annotations

import ctypes
import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on a tick
if TYPE_CHECKING:
    from typing import Any

POLLIN, POLLOUT = 1, 4
EINTR = 4
_LIBC: list[Any] = []


class PollFd(ctypes.Structure):
    """poll(2)'s `struct pollfd`."""

    _fields_ = [("fd", ctypes.c_int), ("events", ctypes.c_short), ("revents", ctypes.c_short)]


def _libc() -> Any:
    """The C library (the process's own symbols), with the prototypes used here."""
    if not _LIBC:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.poll.restype, libc.poll.argtypes = (
            ctypes.c_int,
            [ctypes.POINTER(PollFd), ctypes.c_ulong, ctypes.c_int],
        )
        _LIBC.append(libc)
    return _LIBC[0]


def open_lazily(path: str) -> Any:
    """The library at `path` as a `ctypes.CDLL`, loaded with `RTLD_LAZY` (`OSError` when it
    cannot be loaded); where the C library offers no `dlopen`, ctypes' own load."""
    try:
        dlopen = _libc().dlopen
    except AttributeError:
        return ctypes.CDLL(path)
    dlopen.restype, dlopen.argtypes = ctypes.c_void_p, [ctypes.c_char_p, ctypes.c_int]
    handle = dlopen(os.fsencode(path), os.RTLD_LAZY | os.RTLD_LOCAL)
    if not handle:
        raise OSError(f"cannot load {os.path.basename(path)}")
    return ctypes.CDLL(path, handle=handle)


def wait(sock: int, reading: bool, seconds: float) -> int:
    """poll(2) on one socket: 1 when it is ready (or failed: libpq then says so), 0 after
    `seconds`, -1 when poll itself fails."""
    fd = PollFd(sock, POLLIN if reading else POLLOUT, 0)
    while True:
        found = _libc().poll(ctypes.byref(fd), 1, max(0, min(round(seconds * 1000), 2**31 - 1)))
        if found >= 0:
            return 1 if found else 0
        if ctypes.get_errno() != EINTR:  # a signal: wait again
            return -1
