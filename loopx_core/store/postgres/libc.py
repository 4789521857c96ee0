"""The two things the lean transport asks of the C library itself: a lazy `dlopen` and `poll`.

`ctypes.CDLL` (and `_ctypes.dlopen` under it) loads a library with `RTLD_NOW`, binding every
function of libpq and of the libraries it needs (OpenSSL, Kerberos, LDAP) before the first
call: 2-6 ms here against under 2 ms with `RTLD_LAZY`, which binds each function at its first
call. `poll` waits on the connection's socket while libpq's handshake goes on, without
loading the `select` module. The C types and calls are `cdata`'s (`_ctypes`, not `ctypes`).
"""

from __future__ import annotations

import os

from loopx_core.store.postgres import cdata

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on a tick
if TYPE_CHECKING:
    from typing import Any

POLLIN, POLLOUT = 1, 4
EINTR = 4
_LIBC: list[Any] = []


class PollFd(cdata.Structure):
    """poll(2)'s `struct pollfd`."""

    _fields_ = (("fd", cdata.c_int), ("events", cdata.c_short), ("revents", cdata.c_short))


def _libc() -> Any:
    """The C library (the process's own symbols), with the prototypes used here."""
    if not _LIBC:
        libc = cdata.Library(cdata.dlopen(None, os.RTLD_LOCAL), use_errno=True)
        libc.poll.restype, libc.poll.argtypes = (
            cdata.c_int,
            [cdata.POINTER(PollFd), cdata.c_ulong, cdata.c_int],
        )
        _LIBC.append(libc)
    return _LIBC[0]


def open_lazily(path: str) -> cdata.Library:
    """The library at `path`, loaded with `RTLD_LAZY` (`OSError` when it cannot be loaded);
    where the C library offers no `dlopen`, ctypes' own load."""
    try:
        dlopen = _libc().dlopen
    except AttributeError:
        return cdata.Library(cdata.dlopen(path, os.RTLD_LOCAL), path)
    dlopen.restype, dlopen.argtypes = cdata.c_void_p, [cdata.c_char_p, cdata.c_int]
    handle = dlopen(os.fsencode(path), os.RTLD_LAZY | os.RTLD_LOCAL)
    if not handle:
        raise OSError(f"cannot load {os.path.basename(path)}")
    return cdata.Library(handle, path)


def wait(sock: int, reading: bool, seconds: float) -> int:
    """poll(2) on one socket: 1 when it is ready (or failed: libpq then says so), 0 after
    `seconds`, -1 when poll itself fails."""
    fd = PollFd(sock, POLLIN if reading else POLLOUT, 0)
    while True:
        found = _libc().poll(cdata.byref(fd), 1, max(0, min(round(seconds * 1000), 2**31 - 1)))
        if found >= 0:
            return 1 if found else 0
        if cdata.get_errno() != EINTR:  # a signal: wait again
            return -1
