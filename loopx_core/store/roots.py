"""The project root: `--root`, else `LOOPX_ROOT`, else the nearest folder up holding `.loopx/`.

The walk up stops at the first `.loopx` of any kind (a folder, a file, a link): what is
wrong with it (a file, a folder without its registry) is then said of that folder
(`store.files.require_registry`), never hidden by a project further up.

`find_root` answers with pathlib; `find_root_text` with `os` alone when it is sure
(store/paths.py), so a tick never imports pathlib. A root that cannot be found (a `~` whose
home is unknown, a working folder removed under the shell, a loop of symbolic links) is a
`UsageError`, never an internal one.
"""

from __future__ import annotations

import os

from loopx_core.errors import UsageError
from loopx_core.store import paths

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from pathlib import Path

STATE_DIR = ".loopx"
"""The folder under the project root that holds LoopX's state."""


def find_root(explicit: str | os.PathLike[str] | None = None, *, cwd: Path | None = None) -> Path:
    """The project root: `explicit`, else `LOOPX_ROOT`, else the nearest folder up holding `.loopx/`."""
    from pathlib import Path

    chosen = explicit or os.environ.get("LOOPX_ROOT")
    try:
        if chosen:
            return Path(chosen).expanduser().resolve()
        start = (cwd or Path.cwd()).resolve()
    except FileNotFoundError:  # Path.cwd() in a folder removed under the shell
        raise UsageError("the current folder no longer exists: cd to the project, or pass --root") from None
    except RuntimeError:  # a `~user` whose home is unknown, or a symbolic link loop
        if chosen and os.fspath(chosen).startswith("~") and os.path.expanduser(os.fspath(chosen))[:1] == "~":
            raise UsageError(
                "the project root starts with a ~ whose home folder is unknown: give the folder's path"
            ) from None
        raise UsageError("the project root's path goes round a loop of symbolic links") from None
    for folder in (start, *start.parents):
        state = folder / STATE_DIR
        if (
            state.exists() or state.is_symlink()
        ):  # a `.loopx` file stops here too: the store says what is wrong
            return folder
    return start


def find_root_text(explicit: str | None = None, *, cwd: str | None = None) -> str:
    """`str(find_root(explicit, cwd=...))`, found with `os` alone when that is sure (store/paths.py).

    A tick's reads take the root as a string and so never import pathlib; anything the string
    route is unsure of (a `~` it cannot expand, a symlink loop, Windows) is left to `find_root`,
    which answers or raises as it always did.
    """
    chosen = explicit or os.environ.get("LOOPX_ROOT")
    if chosen:
        expanded = _expanded(os.fspath(chosen))
        found = None if expanded is None else paths.resolved(expanded)
    else:
        try:
            start = paths.resolved(cwd if cwd is not None else os.getcwd())
        except FileNotFoundError:  # the working folder was removed: find_root says so
            start = None
        found = None if start is None else _holding_state(start)
    if found is not None:
        return found
    from pathlib import Path

    return str(find_root(explicit, cwd=Path(cwd) if cwd is not None else None))


def _expanded(text: str) -> str | None:
    """`str(Path(text).expanduser())`, or None where pathlib raises (no home directory known)."""
    clean = paths.pure(text)
    if not clean.startswith("~"):
        return clean
    first, _, rest = clean.partition("/")
    home = os.path.expanduser(first)
    if home[:1] == "~":
        return None
    return paths.pure(f"{home}/{rest}")


def _holding_state(start: str) -> str:
    """The nearest folder from `start` up that holds `.loopx` (of any kind), else `start` (as `find_root` looks)."""
    folder = start
    while True:
        state = os.path.join(folder, STATE_DIR)
        if paths.exists(state) or paths.is_symlink(state):
            return folder
        parent = paths.parent_of(folder)
        if parent == folder:
            return start
        folder = parent
