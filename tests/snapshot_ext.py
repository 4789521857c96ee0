"""Syrupy extensions that keep snapshots under the repository's `snapshots/` folder."""

from __future__ import annotations

from pathlib import Path

from syrupy.extensions.json import JSONSnapshotExtension
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

SNAPSHOT_ROOT = Path(__file__).resolve().parent.parent / "snapshots"


class _UnderSnapshots:
    @classmethod
    def dirname(cls, *, test_location) -> str:  # type: ignore[no-untyped-def]
        return str(SNAPSHOT_ROOT / test_location.basename)


class JsonSnapshot(_UnderSnapshots, JSONSnapshotExtension):
    """One `.json` file per snapshot (packets and other JSON data)."""


class TextSnapshot(_UnderSnapshots, SingleFileSnapshotExtension):
    """One text file per snapshot; subclasses fix the suffix."""

    _write_mode = WriteMode.TEXT
    file_extension = "txt"


class MarkdownSnapshot(TextSnapshot):
    """One `.md` file per snapshot (Markdown renderings)."""

    file_extension = "md"


_BY_SUFFIX: dict[str, type[TextSnapshot]] = {}


def text_extension(filename: str) -> type[TextSnapshot]:
    """The single-file text extension for a generated file's suffix (one class per suffix)."""
    suffix = filename.rsplit(".", 1)[-1] if "." in filename.lstrip(".") else "txt"
    if suffix not in _BY_SUFFIX:
        _BY_SUFFIX[suffix] = type(
            f"Text{suffix.title()}Snapshot", (TextSnapshot,), {"file_extension": suffix}
        )
    return _BY_SUFFIX[suffix]
