"""The project root: `--root`, else `LOOPX_ROOT`, else the nearest folder up holding `.loopx/`.

The walk up stops at the first `.loopx` of any kind (a folder, a file, a link): what is
wrong with it (a file, a folder without its registry) is then said of that folder
(`store.files.require_registry`), never hidden by a project further up.

A root that cannot be found (a `~` whose home is unknown, a working folder removed under the
shell, a loop of symbolic links) is a `UsageError`, never an internal one.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from loopx_core.errors import UsageError

STATE_DIR = ".loopx"
"""The folder under the project root that holds LoopX's state."""


def find_root(explicit: str | os.PathLike[str] | None = None, *, cwd: Path | None = None) -> Path:
    """The project root: `explicit`, else `LOOPX_ROOT`, else the nearest folder up holding `.loopx/`."""
    chosen = explicit or os.environ.get("LOOPX_ROOT")
    try:
        if chosen:
            found = Path(chosen).expanduser().resolve()
            _refuse_a_loop(found)
            return found
        start = (cwd or Path.cwd()).resolve()
    except FileNotFoundError:  # Path.cwd() in a folder removed under the shell
        raise UsageError("the current folder no longer exists: cd to the project, or pass --root") from None
    except (RuntimeError, OSError):  # a `~user` whose home is unknown, or a symbolic link loop
        if chosen and os.fspath(chosen).startswith("~") and os.path.expanduser(os.fspath(chosen))[:1] == "~":
            raise UsageError(
                "the project root starts with a ~ whose home folder is unknown: give the folder's path"
            ) from None
        raise UsageError("the project root's path goes round a loop of symbolic links") from None
    for folder in (start, *start.parents):
        state = folder / STATE_DIR
        if os.path.lexists(state):  # a `.loopx` file or link stops here too: the store says what is wrong
            return folder
    return start


def _refuse_a_loop(path: Path) -> None:
    """A root that goes round a loop of symbolic links is an `OSError` (ELOOP), whatever the
    Python (3.13's `resolve` returns such a path as it is)."""
    try:
        path.stat()
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise
