"""Class: the entry-point scanner (loopx_core/distributions.py) reading a site otherwise than importlib.metadata.

The lean host registry and pydantic's plugin-loader stand-in both trust `scan(path)` in place of
importlib.metadata. On generated site folders (names that normalize alike, odd suffixes and
cases, folders without a name, metadata files where folders should be, entry_points.txt
missing, a folder, not UTF-8, with broken lines, repeated and empty groups), whenever the scan
answers, importlib.metadata reads the same distributions in the same order, with the same
normalized names and the same entry points by group, without an error; and the scan is unsure
(None) only where importlib.metadata fails or the scan cannot tell (entry_points.txt a folder,
a name importlib.metadata would take from METADATA). The same holds for this suite's sys.path.
"""

from __future__ import annotations

import importlib.metadata
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopx_core.distributions import Groups, other_finder, scan

NAMES = [
    "alpha-1.0.dist-info",
    "Alpha-2.0.dist-info",  # the same name as alpha, normalized
    "ALPHA.egg-info",
    "alpha_.egg-info",
    "Beta.Gamma-1.egg-info",
    "beta_gamma-3.dist-info",
    "beta--gamma.dist-info",
    "delta.dist-info",
    "\u00e9ta-1.dist-info",
    "plain-folder",
    "module.py",
]
ODD_NAMES = [
    "Zeta-1.0.DIST-INFO",  # importlib.metadata's Lookup finds it, names it from METADATA
    "-1.0.dist-info",  # no name before the version
    ".dist-info",
    "..dist-info",
    ".eta.dist-info",
]
LINES = [
    "[console_scripts]",
    "[loopx]",
    "[loopx.events]",
    "[ loopx ]",
    "[[loopx]]",
    "[]",
    "tool = pkg.cli:main",
    "claude-stop=loopx_claude_code.plugin",
    " spaced  =  value ",
    "x = y = z",
    "# a comment",
    "; not a comment",
    "",
    "   ",
    "\ufeff[loopx]",
]


FAULTS = ["folder", "bad line", "not utf-8", "odd name"]


@st.composite
def sites(draw: st.DrawFn) -> list[tuple[str, str, bytes]]:
    """(folder name, how its entry_points.txt is kept, its bytes) for a few distributions; about
    half the sites hold one fault (a folder for entry_points.txt, a broken line, bytes that are not
    UTF-8, a name importlib.metadata takes from METADATA), so both answers are exercised."""
    names = draw(st.lists(st.sampled_from(NAMES), max_size=6, unique=True))
    fault = draw(st.none() | st.none() | st.sampled_from(FAULTS))
    if fault == "odd name":
        names.append(draw(st.sampled_from(ODD_NAMES)))
    faulty = draw(st.integers(0, max(len(names) - 1, 0)))
    found = []
    for index, name in enumerate(names):
        kind = draw(st.sampled_from(["file"] * 6 + ["none", "info-file"]))
        lines = [f"[origin]\nfolder = {index}", *draw(st.lists(st.sampled_from(LINES), max_size=6))]
        data = "\n".join(lines).encode()  # [origin]: the order of distributions named alike shows
        if draw(st.booleans()):
            data = data.replace(b"\n", draw(st.sampled_from([b"\r\n", b"\r"])))
        if index == faulty and fault in ("folder", "bad line", "not utf-8"):
            kind = "folder" if fault == "folder" else "file"
            data += b"\n[loopx]\na line without an equals sign" if fault == "bad line" else b"\xff\xfe"
        found.append((name, kind, data))
    return found


def _build(folder: Path, dists: list[tuple[str, str, bytes]]) -> None:
    for name, kind, data in dists:
        info = folder / name
        if kind == "info-file":  # a metadata file (PKG-INFO alone), not a folder
            info.write_text("Metadata-Version: 1.0\nName: odd\n")
            continue
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name.split('-')[0] or 'odd'}\n")
        if kind == "file":
            (info / "entry_points.txt").write_bytes(data)
        elif kind == "folder":
            (info / "entry_points.txt").mkdir()


def _metadata(path: list[str] | None = None) -> list[tuple[str, Groups]]:
    """What importlib.metadata reads on `path` (else sys.path): each distribution's normalized
    name and its entry points by group, in its order."""
    found = []
    dists = (
        importlib.metadata.distributions(path=path)
        if path is not None
        else importlib.metadata.distributions()
    )
    for dist in dists:
        groups: Groups = {}
        for entry in dist.entry_points:
            groups.setdefault(entry.group, []).append((entry.name, entry.value))
        found.append((dist._normalized_name, groups))  # type: ignore[attr-defined]
    return found


def _with_entries(found: list[tuple[str, Groups]]) -> list[tuple[str, Groups]]:
    """The groups that hold an entry (importlib.metadata knows no group without one)."""
    return [(name, {g: e for g, e in groups.items() if e}) for name, groups in found]


def _name_from_metadata(folder: str) -> bool:
    """Whether importlib.metadata names this distribution from its METADATA, not its folder's name."""
    return not importlib.metadata.PathDistribution._name_from_stem(folder)  # type: ignore[attr-defined]


@settings(max_examples=500, deadline=None)
@given(sites())
def test_what_the_scan_answers_importlib_metadata_reads_alike(
    tmp_path_factory: pytest.TempPathFactory, dists: list[tuple[str, str, bytes]]
) -> None:
    folder = tmp_path_factory.mktemp("site")  # a fresh folder: importlib.metadata caches by mtime
    _build(folder, dists)
    found = scan([str(folder)])
    try:
        expected: list[tuple[str, Groups]] | None = _metadata([str(folder)])
    except Exception:  # what pluggy's loading or pydantic's loader would raise
        expected = None
    if found is None:
        infos = [(n, k) for n, k, _ in dists if n.lower().endswith((".dist-info", ".egg-info"))]
        doubt = any(k == "folder" or _name_from_metadata(n) for n, k in infos)
        assert expected is None or doubt, dists
        return
    assert expected is not None, dists
    assert _with_entries(found) == expected, dists


def test_the_scan_reads_this_suites_path_as_importlib_metadata() -> None:
    """Not vacuous: the real site (with LoopX's own entry points) is read, in importlib.metadata's order."""
    assert not other_finder()
    found = scan(sys.path)
    assert found is not None and _with_entries(found) == _metadata()
    assert any(groups.get("loopx") for _, groups in found)


def test_the_scan_is_unsure_of_what_it_cannot_read(tmp_path: Path) -> None:
    (tmp_path / "odd-1.0.dist-info" / "entry_points.txt").mkdir(parents=True)
    assert scan([str(tmp_path)]) is None
    assert scan([str(tmp_path / "missing"), 42]) is None  # not a folder name
    assert scan([str(tmp_path / "missing")]) == []
    assert scan([str(tmp_path / "lib.egg")]) is None
    (tmp_path / "site.zip").write_bytes(b"")
    assert scan([str(tmp_path / "site.zip")]) is None  # importlib.metadata would open it as a zip


def test_a_group_without_entries_is_declared(tmp_path: Path) -> None:
    info = tmp_path / "tool-1.0.dist-info"
    info.mkdir()
    (info / "entry_points.txt").write_text(
        "orphan = before.any:header\n[pydantic]\n[loopx]\na = b\n[pydantic]\n"
    )
    assert scan([str(tmp_path)]) == [("tool", {"pydantic": [], "loopx": [("a", "b")]})]
