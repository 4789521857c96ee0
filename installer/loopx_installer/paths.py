"""Where facade files go: bases per scope, and path checks (no symlinks, nothing outside)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path, PurePosixPath

from loopx_core.errors import RefusedError, UsageError
from loopx_core.hosts.model import BASES


def bases(scope: str, target: Path | None) -> dict[str, Path]:
    """Absolute folder for each base name.

    Project scope (and any `--target`) puts everything under one folder. User scope honours
    `CLAUDE_CONFIG_DIR`, `CODEX_HOME`, `DSH_HOME` and `DSH_AGENTS_HOME`.
    """
    if target is not None or scope == "project":
        root = (target or Path.cwd()).resolve()
        return dict.fromkeys(BASES, root)
    home = Path(os.environ.get("HOME") or Path.home()).resolve()

    def env(name: str, default: Path) -> Path:
        value = os.environ.get(name)
        return Path(value).expanduser().resolve() if value else default

    claude = env("CLAUDE_CONFIG_DIR", home / ".claude")
    dsh = env("DSH_HOME", home / ".dsh")
    return {
        "target": home,
        "home": home,
        "claude_config": claude,
        "claude_json": claude if os.environ.get("CLAUDE_CONFIG_DIR") else home,
        "codex_home": env("CODEX_HOME", home / ".codex"),
        "dsh_home": dsh,
        "dsh_agents_home": env("DSH_AGENTS_HOME", dsh),
    }


def manifest_path(scope: str, target: Path | None) -> Path:
    """The manifest of what LoopX installed: `<target>/.loopx/facades.json`, or `~/.loopx/facades.json`."""
    return bases(scope, target)["target"] / ".loopx" / "facades.json"


def safe_path(base: Path, relative: str) -> Path:
    """`base/relative`, refusing absolute paths, `..`, and any symlink on the way (or at the end)."""
    rel = PurePosixPath(relative)
    if rel.is_absolute() or not rel.parts or any(p in ("..", ".", "") for p in rel.parts):
        raise UsageError(f"facade path {relative!r} must be relative and stay inside {base}")
    path = base
    for part in rel.parts:
        path = path / part
        if path.is_symlink():
            raise RefusedError(f"refusing to write through the symlink {path}", code="symlink")
    if not path.resolve().is_relative_to(base.resolve()):
        raise RefusedError(f"refusing to write outside {base}: {path}", code="outside_target")
    return path


def display(path: Path, roots: dict[str, Path]) -> str:
    """A short name for a path: relative to the target, else with the home folder as `~`."""
    target = roots["target"]
    if path.is_relative_to(target):
        return str(path.relative_to(target))
    home = roots["home"]
    return "~/" + str(path.relative_to(home)) if path.is_relative_to(home) else str(path)


def prune_dirs(folders: set[str] | list[str]) -> None:
    """Remove folders LoopX created, deepest first, where nothing else lives in them now."""
    for folder in sorted(set(folders), key=lambda f: f.count("/"), reverse=True):
        with contextlib.suppress(OSError):
            Path(folder).rmdir()
