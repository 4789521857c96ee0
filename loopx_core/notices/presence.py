"""Whether any notice sink is configured: the one question a settlement step asks before it
builds a notice, answered without the notice models (and so without pydantic), and on string
paths (pathlib imports fnmatch, re and enum: about 5 ms of the closing step's start-up)."""

from __future__ import annotations

import os

from loopx_core.store.roots import STATE_DIR

from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from pathlib import Path

NOTICES_DIR = "notices"
"""The project's notice folder, under `.loopx/`."""


def notices_dir(root: Path) -> Path:
    """`.loopx/notices/`."""
    return root / STATE_DIR / NOTICES_DIR


def sinks_path(root: Path, scope: str) -> Path:
    """The sink file of `scope` (`project` or `user`)."""
    from pathlib import Path

    return Path(_sinks_file(os.fspath(root), scope))


def _sinks_file(root: str, scope: str) -> str:
    """`sinks_path` as a string."""
    if scope == "project":
        return os.path.join(root, STATE_DIR, NOTICES_DIR, "sinks.json")
    base = os.environ.get("XDG_CONFIG_HOME", "").strip()
    folder = base if base and os.path.isabs(base) else os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(folder, "loopx", "notices.json")


def has_sinks(root: Path | str) -> bool:
    """True when either sink file exists (a cheap test before anything is read)."""
    text = os.fspath(root)
    return os.path.isfile(_sinks_file(text, "project")) or os.path.isfile(_sinks_file(text, "user"))
