"""Non-files for the tests of stored paths: a FIFO, a socket, device links, folders, loops, sparse giants.

`replace_with(path, kind)` puts one of `KINDS` where a stored file is; `tree_of_kinds(root)` is
everything under `.loopx/` (but the locks) as bytes or as the kind of thing it is, so a test
can say that a command wrote nothing without reading a FIFO or a 1 GiB sparse file.
"""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path
from typing import Any

from loopx_core.store.atomic import MAX_APPENDED_BYTES, MAX_DOCUMENT_BYTES

KINDS = ("fifo", "socket", "dev-zero", "dev-null", "folder", "link-loop", "link-to-nothing", "too-big")
"""What may stand where a stored file should."""


def replace_with(path: Path, kind: str, *, appended: bool = False) -> None:
    """Put `kind` where `path` is (whatever was there removed)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":  # bound by its name from its folder: a socket path is at most 107 bytes
        here = os.getcwd()
        os.chdir(path.parent)
        try:
            with socket.socket(socket.AF_UNIX) as sock:
                sock.bind(path.name)
        finally:
            os.chdir(here)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "dev-null":
        path.symlink_to("/dev/null")
    elif kind == "folder":
        path.mkdir()
    elif kind == "link-loop":
        path.symlink_to(path.name)
    elif kind == "link-to-nothing":
        path.symlink_to(path.name + ".gone")
    elif kind == "too-big":  # sparse: nothing is written to the disk
        with path.open("wb") as handle:
            handle.truncate((MAX_APPENDED_BYTES if appended else MAX_DOCUMENT_BYTES) + 1)
    else:
        raise AssertionError(kind)


def tree_of_kinds(root: Path) -> dict[str, Any]:
    """Every entry under `.loopx/` but the locks: a regular file's bytes, else what it is."""
    found: dict[str, Any] = {}
    for folder, dirs, names in os.walk(root / ".loopx"):
        for name in dirs + names:
            path = Path(folder) / name
            if "locks" in path.relative_to(root).parts:
                continue
            info = path.lstat()
            if path.is_symlink():
                found[str(path.relative_to(root))] = ("link", os.readlink(path))
            elif path.is_file():
                found[str(path.relative_to(root))] = (
                    info.st_size,
                    path.read_bytes() if info.st_size < 1 << 20 else None,
                )
            else:
                found[str(path.relative_to(root))] = ("kind", info.st_mode & 0o170000)
    return found
