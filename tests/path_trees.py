"""Generated path texts and small trees, for the tests that hold store/paths.py to pathlib.

Shared by tests/adversarial/test_os_paths.py (the POSIX branch against pathlib) and
test_os_paths_fallback.py (the fallback against the POSIX branch): one alphabet of path parts,
one set of entry kinds, one builder of trees.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import strategies as st

PART = st.sampled_from(["a", "b", ".", "..", "", "~", "x y", ".loopx"])
TEXTS = st.lists(PART, max_size=5).map("/".join) | st.lists(PART, max_size=5).map(lambda p: "/" + "/".join(p))
TEXTS = TEXTS | TEXTS.map(lambda t: "/" + t) | TEXTS.map(lambda t: t + "/")
"""Path texts: relative and absolute, with `.`, `..`, empty parts and a doubled or trailing slash."""
KINDS = st.sampled_from(["missing", "file", "dir", "link-file", "link-dir", "link-missing", "link-self"])
NAMES = ("a", "b", "c")
QUERIES = st.lists(st.sampled_from([*NAMES, "d", ".", ".."]), min_size=1, max_size=3).map("/".join)
"""Paths asked of a tree `build` made (`d` is never there)."""


def build(top: Path, kinds: tuple[str, ...]) -> None:
    """Entries `a`, `b`, `c` under `top`, one kind each (a folder holds a file `f`)."""
    for name, kind in zip(NAMES, kinds, strict=True):
        entry = top / name
        if kind == "file":
            entry.write_text("x")
        elif kind == "dir":
            entry.mkdir()
            (entry / "f").write_text("x")
        elif kind.startswith("link-"):
            target = {"link-file": "tf", "link-dir": "td", "link-missing": "gone", "link-self": name}[kind]
            entry.symlink_to(target)
    (top / "tf").write_text("x")
    (top / "td").mkdir(exist_ok=True)
