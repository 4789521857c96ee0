"""Whether any notice sink is configured: the one question a settlement step asks before it
builds a notice (a cheap test before anything is read)."""

from __future__ import annotations

import os
from pathlib import Path

from loopx_core.store.roots import STATE_DIR

NOTICES_DIR = "notices"
"""The project's notice folder, under `.loopx/`."""


def notices_dir(root: Path) -> Path:
    """`.loopx/notices/`."""
    return Path(root) / STATE_DIR / NOTICES_DIR


def sinks_path(root: Path, scope: str) -> Path:
    """The sink file of `scope` (`project` or `user`): `$XDG_CONFIG_HOME/loopx/notices.json` for the
    user (default `~/.config/loopx/`)."""
    if scope == "project":
        return notices_dir(root) / "sinks.json"
    base = os.environ.get("XDG_CONFIG_HOME", "").strip()
    folder = Path(base) if base and os.path.isabs(base) else Path(os.path.expanduser("~")) / ".config"
    return folder / "loopx" / "notices.json"


def has_sinks(root: Path) -> bool:
    """True when either sink file exists."""
    return sinks_path(root, "project").is_file() or sinks_path(root, "user").is_file()
