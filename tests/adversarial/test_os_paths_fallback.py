"""store/paths.py off POSIX, and the errors it must raise as pathlib raises them.

Class: "a path question answered by the other branch". Off POSIX every function in
store/paths.py hands the question to pathlib; on POSIX it answers with `os` alone. Both
branches must give pathlib's answer, so with `POSIX` switched off (the only thing that differs
on another system, as far as these functions can tell) every function answers exactly as the
POSIX branch does, on generated path texts and generated trees. The POSIX branch must also
raise what pathlib raises where pathlib does not answer False: a name too long for the
system is an `OSError` from every predicate, an embedded NUL is False (pathlib's ValueError
rule), and a store written and read through the fallback holds the same bytes.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopx_core.store import paths
from loopx_core.store.atomic import atomic_write_bytes, read_bytes
from tests.path_trees import KINDS, QUERIES, TEXTS, build

pytestmark = pytest.mark.skipif(not paths.POSIX, reason="compares the fallback with the POSIX branch")

PREDICATES = ("is_dir", "is_file", "exists", "is_symlink")


@contextmanager
def fallback() -> Iterator[None]:
    """store/paths.py as it runs off POSIX: every answer asked of pathlib."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(paths, "POSIX", False)
        yield


def outcome(ask: Any) -> tuple[object, ...]:
    """A call's value, or its exception's type and errno (or text)."""
    try:
        return ("ok", ask())
    except OSError as error:
        return (type(error).__name__, error.errno)
    except Exception as error:  # the comparison is the point: whatever either branch raises
        return (type(error).__name__, str(error))


def both(ask: Any) -> tuple[tuple[object, ...], tuple[object, ...]]:
    """`ask()`'s outcome on the POSIX branch, then on the fallback."""
    native = outcome(ask)
    with fallback():
        return native, outcome(ask)


def test_the_switch_reaches_the_fallback() -> None:
    """Guards the comparisons below: with POSIX off a function really asks pathlib (it raises
    pathlib's TypeError for a bytes path os accepts), so equal answers are not one branch twice."""
    assert outcome(lambda: paths.is_dir(b"/")) == ("ok", True)
    with fallback():
        assert outcome(lambda: paths.is_dir(b"/"))[0] == "TypeError"


@given(TEXTS, TEXTS)
def test_pure_names_and_relative_parts_are_the_same_off_posix(text: str, base: str) -> None:
    for ask in (
        lambda: paths.pure(text),
        lambda: paths.parent_of(text),
        lambda: paths.name_of(text),
        lambda: paths.two_parts(text),
        lambda: paths.relative_parts(text, base),
    ):
        native, other = both(ask)
        assert native == other
    expected = PurePosixPath(text)
    with fallback():
        assert paths.parent_of(text) == str(expected.parent)
        assert paths.relative_parts(text, text) == []


@settings(max_examples=40, deadline=None)
@given(st.tuples(KINDS, KINDS, KINDS), st.lists(QUERIES, min_size=1, max_size=3))
def test_predicates_are_the_same_off_posix(
    tmp_path_factory: pytest.TempPathFactory, kinds: tuple[str, str, str], queries: list[str]
) -> None:
    top = tmp_path_factory.mktemp("tree")
    build(top, kinds)
    for query in queries:
        for text in (str(top / query), str(top) + "/" + query + "/f"):
            for name in PREDICATES:
                ask = getattr(paths, name)
                native, other = both(lambda: ask(text))  # noqa: B023
                assert native == other, (name, text)
            with fallback():
                assert paths.resolved(text) is None  # the caller asks pathlib itself


@settings(max_examples=40, deadline=None)
@given(st.tuples(KINDS, KINDS, KINDS), QUERIES, st.sampled_from(["", "/n", "/n/m"]))
def test_make_folders_is_the_same_off_posix(
    tmp_path_factory: pytest.TempPathFactory, kinds: tuple[str, str, str], query: str, deeper: str
) -> None:
    ours, theirs = tmp_path_factory.mktemp("posix"), tmp_path_factory.mktemp("fallback")
    build(ours, kinds)
    build(theirs, kinds)
    native = outcome(lambda: paths.make_folders(str(ours / query) + deeper))
    with fallback():
        other = outcome(lambda: paths.make_folders(str(theirs / query) + deeper))
    assert native == other
    assert sorted(p.relative_to(ours).as_posix() for p in ours.rglob("*")) == sorted(
        p.relative_to(theirs).as_posix() for p in theirs.rglob("*")
    )


@pytest.mark.parametrize("name", PREDICATES)
def test_a_name_too_long_raises_as_pathlib_does(tmp_path: Path, name: str) -> None:
    text = str(tmp_path / ("n" * 300))
    native, other = both(lambda: getattr(paths, name)(text))
    assert native == other == ("OSError", errno.ENAMETOOLONG)
    assert outcome(getattr(Path(text), name)) == native


def test_a_folder_name_too_long_is_refused_by_make_folders_as_by_mkdir(tmp_path: Path) -> None:
    text = str(tmp_path / ("n" * 300) / "deeper")
    native, other = both(lambda: paths.make_folders(text))
    assert native == other == ("OSError", errno.ENAMETOOLONG)
    assert list(tmp_path.iterdir()) == []


@given(st.text(st.sampled_from("ab/.\x00"), min_size=1, max_size=8).filter(lambda t: "\x00" in t))
def test_an_embedded_nul_is_false_for_every_predicate(text: str) -> None:
    for name in PREDICATES:
        native, other = both(lambda: getattr(paths, name)(text))  # noqa: B023
        assert native == other == ("ok", False)
        assert getattr(Path(text), name)() is False
    assert paths.resolved(text) is None


def test_a_file_written_through_the_fallback_reads_back_the_same(tmp_path: Path) -> None:
    data = b'{"schema_version": 1}\n'
    atomic_write_bytes(str(tmp_path / "posix" / "goal" / "state.json"), data)
    with fallback():
        atomic_write_bytes(str(tmp_path / "fallback" / "goal" / "state.json"), data)
        got, where = read_bytes(tmp_path / "fallback" / "goal" / "state.json", what="state", root=tmp_path)
    assert got == data == (tmp_path / "posix" / "goal" / "state.json").read_bytes()
    assert where == "fallback/goal/state.json"
    leftovers = [p.name for p in tmp_path.rglob("*") if p.name.endswith(".tmp")]
    assert leftovers == []
    assert os.listdir(tmp_path / "fallback" / "goal") == ["state.json"]
