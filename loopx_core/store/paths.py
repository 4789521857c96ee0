"""pathlib's answers to the few questions a tick asks of a path, with `os` alone.

`import pathlib` costs a command ~2.5 ms (it loads `urllib.parse`, `ipaddress`, `ntpath` and
`fnmatch`), a tenth of `loopx quota should-run` above the interpreter's own start. A tick's
reads (finding the root, choosing the store, reading its files) and the Stop hook's counter
therefore work on path strings through these functions, which answer what `Path(p).is_dir()`,
`.is_file()`, `.exists()`, `.is_symlink()`, `str(PurePosixPath(p))`, `Path(p).resolve()` and
`Path(p).mkdir(parents=True, exist_ok=True)` answer (Python 3.11's pathlib, step by step): the
same value, or the same exception where pathlib raises one. tests/adversarial/test_os_paths.py
compares both on generated paths and trees. Off POSIX every function asks pathlib itself.
"""

from __future__ import annotations

import errno
import os
import stat
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    PathText = str | os.PathLike[str]

POSIX = os.name == "posix" and sys.platform != "win32"
_IGNORED = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)
"""The errors pathlib's predicates answer False to (`pathlib._ignore_error`); others raise."""


def _mode(path: PathText, *, follow: bool = True) -> int | None:
    """The file's mode; None where pathlib's predicates answer False, other errors raised as there."""
    try:
        return (os.stat(path) if follow else os.lstat(path)).st_mode
    except OSError as error:
        if getattr(error, "errno", None) in _IGNORED:
            return None
        raise
    except ValueError:  # an embedded NUL: pathlib's predicates answer False
        return None


def is_dir(path: PathText) -> bool:
    """`Path(path).is_dir()`."""
    if not POSIX:
        from pathlib import Path

        return Path(path).is_dir()
    mode = _mode(path)
    return mode is not None and stat.S_ISDIR(mode)


def is_file(path: PathText) -> bool:
    """`Path(path).is_file()`."""
    if not POSIX:
        from pathlib import Path

        return Path(path).is_file()
    mode = _mode(path)
    return mode is not None and stat.S_ISREG(mode)


def exists(path: PathText) -> bool:
    """`Path(path).exists()`."""
    if not POSIX:
        from pathlib import Path

        return Path(path).exists()
    return _mode(path) is not None


def is_symlink(path: PathText) -> bool:
    """`Path(path).is_symlink()`."""
    if not POSIX:
        from pathlib import Path

        return Path(path).is_symlink()
    mode = _mode(path, follow=False)
    return mode is not None and stat.S_ISLNK(mode)


def pure(text: str) -> str:
    """`str(PurePath(text))`: one slash between parts, no `.` part, no trailing slash (`.` if empty)."""
    if not POSIX:
        from pathlib import PurePath

        return str(PurePath(text))
    if text.startswith("//") and not text.startswith("///"):
        root = "//"  # POSIX leaves two leading slashes to the system, and so does pathlib
    elif text.startswith("/"):
        root = "/"
    else:
        root = ""
    parts = [part for part in text.split("/") if part and part != "."]
    return root + "/".join(parts) if root or parts else "."


def resolved(text: str) -> str | None:
    """`str(Path(text).resolve())`, or None where pathlib must answer (it raises for a symlink loop).

    The caller asks pathlib on None (it raises the error it always raised) and off POSIX.
    """
    if not POSIX or "\x00" in text:
        return None
    real = pure(os.path.realpath(pure(text)))
    try:
        os.stat(real)
    except OSError as error:
        if error.errno == errno.ELOOP:
            return None  # pathlib's resolve raises RuntimeError("Symlink loop from ...")
    return real


def make_folders(folder: str) -> None:
    """`Path(folder).mkdir(parents=True, exist_ok=True)`, step by step as pathlib takes it."""
    if not POSIX:
        from pathlib import Path

        Path(folder).mkdir(parents=True, exist_ok=True)
        return
    folder = pure(folder)
    try:
        os.mkdir(folder, 0o777)
    except FileNotFoundError:
        parent = parent_of(folder)
        if parent == folder:
            raise
        make_folders(parent)
        try:  # pathlib's second, parents=False attempt
            os.mkdir(folder, 0o777)
        except FileNotFoundError:
            raise
        except OSError:
            if not is_dir(folder):
                raise
    except OSError:
        if not is_dir(folder):
            raise


def _anchored(text: str) -> tuple[str, list[str]]:
    """A pure path's root (`""`, `/` or `//`) and its parts."""
    root = (
        "//" if text.startswith("//") and not text.startswith("///") else "/" if text.startswith("/") else ""
    )
    return root, [part for part in text.split("/") if part and part != "."]


def relative_parts(text: str, base: str) -> list[str] | None:
    """The parts of `Path(text).relative_to(base)`, or None where pathlib raises ValueError."""
    if not POSIX:
        from pathlib import PurePath

        try:
            return list(PurePath(text).relative_to(base).parts)
        except ValueError:
            return None
    (root, parts), (base_root, base_parts) = _anchored(text), _anchored(base)
    if root != base_root or parts[: len(base_parts)] != base_parts:
        return None
    return parts[len(base_parts) :]


def parent_of(path: PathText) -> str:
    """`str(Path(path).parent)`."""
    text = pure(os.fspath(path))
    if not POSIX:
        from pathlib import PurePath

        return str(PurePath(text).parent)
    head, _ = os.path.split(text)
    return pure(head) if head else "."


def name_of(path: PathText) -> str:
    """`Path(path).name`."""
    text = pure(os.fspath(path))
    if not POSIX:
        from pathlib import PurePath

        return PurePath(text).name
    name = os.path.split(text)[1]
    return "" if name == "." and text == "." else name


def two_parts(path: PathText) -> str:
    """`f"{p.parent.name}/{p.name}"` for `p = Path(path)`: a file named without its full path."""
    return f"{name_of(parent_of(path))}/{name_of(path)}"
