"""Uninstalling a host whose plugin is gone (pip-uninstalled, or blocked by `LOOPX_PLUGINS`).

Uninstall needs nothing of the host but what the install recorded: each file's base and path,
what LoopX wrote there (an owned file's sha, a merged file's fragment and keys). So its files
are taken out from the manifest alone. Only two things need the plugin: unregistering LoopX
from the host's own CLI (the report says so), and where the plugin's own folders are at user
scope (`$CODEX_HOME`: the plugin declares the variable). Files recorded under such a folder
cannot be found; the error lists them, with what to take out of each by hand.
"""

from __future__ import annotations

from loopx_core.errors import UsageError
from loopx_installer.manifest import FileModel, Manifest


def recorded(manifest: Manifest, host: str) -> bool:
    """True when the manifest holds something of `host` (a file, or a record under an unknown base)."""
    return bool(manifest.owned_by(host)) or any(host in rec.owners for rec in manifest.kept)


def _by_hand(rec: FileModel, host: str) -> str:
    owner = rec.owners[host]
    where = f"<{rec.base}>/{rec.path}"
    if owner.merge == "owned":
        return f"{where} (delete it)"
    if owner.merge == "markdown":
        return f"{where} (take out its `<!-- loopx:begin {host} -->` block)"
    keys = ", ".join(".".join(k for k in key if k != "[]") for key in owner.owned_keys)
    return f"{where} (take out LoopX's {keys or 'keys'})"


def refuse_unplaced(manifest: Manifest, host: str) -> None:
    """Files of `host` recorded under a folder only its (gone) plugin can place: a usage error naming
    each, and what to take out of it, so they can be removed by hand."""
    lost = [rec for rec in manifest.kept if host in rec.owners]
    if not lost:
        return
    listed = "; ".join(_by_hand(rec, host) for rec in lost[:8])
    more = f"; and {len(lost) - 8} more" if len(lost) > 8 else ""
    raise UsageError(
        f"{host}'s plugin is not installed, so where its folders are is unknown and nothing was "
        f"removed: reinstall the plugin and run this again, or remove by hand: {listed}{more}"
    )


def notice(host: str) -> str:
    """What the report says after removing a gone plugin's files."""
    return (
        f"{host}'s plugin is not installed: LoopX removed what the install recorded; if the host's "
        "own CLI registered LoopX, unregister it there by hand."
    )
