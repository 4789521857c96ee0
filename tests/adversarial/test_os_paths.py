"""store/paths.py answers as pathlib does: the class "a tick's path question, asked without pathlib".

should-run and the host hooks read (and the Stop hook writes) through string paths so that
they never import pathlib (tests/test_hot_path_stdlib.py pins that). Each answer must be
pathlib's: the same value, or the same exception. Generated path texts check the pure
functions; generated trees (files, folders, symlinks to files, folders, nothing or themselves,
a file where a folder is expected) check the predicates, `resolve`, `mkdir(parents=True,
exist_ok=True)`, finding the project root, and that a `FileLayout` names a `FileStore`'s files.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopx_core.store import paths
from loopx_core.store.atomic import shown
from loopx_core.store.files import FileLayout, FileStore
from loopx_core.store.lean import LeanFileStore
from loopx_core.store.roots import STATE_DIR, find_root, find_root_text
from tests.path_trees import KINDS, QUERIES, TEXTS, build

pytestmark = pytest.mark.skipif(not paths.POSIX, reason="off POSIX store/paths.py asks pathlib itself")


def outcome(ask: Any) -> tuple[object, ...]:
    """A call's value, or its exception's type and text."""
    try:
        return ("ok", ask())
    except Exception as error:  # the comparison is the point: whatever pathlib raises
        return (type(error).__name__, str(error))


@given(TEXTS)
def test_pure_parent_and_name_are_pathlibs(text: str) -> None:
    pure = PurePosixPath(text)
    assert paths.pure(text) == str(pure)
    assert paths.parent_of(text) == str(pure.parent)
    assert paths.name_of(text) == pure.name
    assert paths.two_parts(text) == f"{pure.parent.name}/{pure.name}"


@given(TEXTS, TEXTS)
def test_shown_is_relative_to_as_pathlib_reads_it(text: str, base: str) -> None:
    try:
        expected = str(PurePosixPath(text).relative_to(base))
    except ValueError:
        expected = str(PurePosixPath(text))
    assert shown(text, base) == expected
    assert shown(Path(text), Path(base)) == expected
    assert shown(text, None) == str(PurePosixPath(text))


@settings(max_examples=60, deadline=None)
@given(st.tuples(KINDS, KINDS, KINDS), st.lists(QUERIES, min_size=1, max_size=4))
def test_predicates_and_resolve_answer_as_pathlib(
    tmp_path_factory: pytest.TempPathFactory, kinds: tuple[str, str, str], queries: list[str]
) -> None:
    top = tmp_path_factory.mktemp("tree")
    build(top, kinds)
    for query in queries:
        for text in (str(top / query), str(top) + "/" + query + "/f"):
            path = Path(text)
            for name in ("is_dir", "is_file", "exists", "is_symlink"):
                ours, theirs = getattr(paths, name), getattr(path, name)
                assert outcome(lambda: ours(text)) == outcome(theirs), (name, text)  # noqa: B023
            real = paths.resolved(text)
            if real is None:  # only where pathlib raises: a symlink loop
                with pytest.raises(RuntimeError, match="Symlink loop"):
                    path.resolve()
            else:
                assert real == str(path.resolve())


def _tree_state(top: Path) -> list[tuple[str, str]]:
    """Every entry under `top` (not following links) and its kind."""
    found = []
    for folder, dirs, files in os.walk(top):
        for name in dirs + files:
            entry = Path(folder) / name
            kind = "link" if entry.is_symlink() else "dir" if entry.is_dir() else "file"
            found.append((str(entry.relative_to(top)), kind))
    return sorted(found)


@settings(max_examples=60, deadline=None)
@given(st.tuples(KINDS, KINDS, KINDS), QUERIES, st.sampled_from(["", "/n", "/n/m"]))
def test_make_folders_is_mkdir_with_parents(
    tmp_path_factory: pytest.TempPathFactory, kinds: tuple[str, str, str], query: str, deeper: str
) -> None:
    ours, theirs = tmp_path_factory.mktemp("ours"), tmp_path_factory.mktemp("theirs")
    build(ours, kinds)
    build(theirs, kinds)

    def errno_of(ask: Any) -> object:
        try:
            ask()
        except OSError as error:
            return (type(error).__name__, error.errno)
        return "ok"

    got = errno_of(lambda: paths.make_folders(str(ours / query) + deeper))
    assert got == errno_of(lambda: Path(str(theirs / query) + deeper).mkdir(parents=True, exist_ok=True))
    assert _tree_state(ours) == _tree_state(theirs)


@settings(max_examples=60, deadline=None)
@given(st.tuples(KINDS, KINDS, KINDS), QUERIES, st.sampled_from(["", "a", "b", "c"]))
def test_the_root_found_with_strings_is_find_roots(
    tmp_path_factory: pytest.TempPathFactory, kinds: tuple[str, str, str], query: str, holder: str
) -> None:
    top = tmp_path_factory.mktemp("project")
    build(top, kinds)
    if holder and (top / holder).is_dir() and not (top / holder / STATE_DIR).exists():
        (top / holder / STATE_DIR).mkdir()
    start = str(top / query)
    assert outcome(lambda: find_root_text(start)) == outcome(lambda: str(find_root(start)))
    assert outcome(lambda: find_root_text(None, cwd=start)) == outcome(
        lambda: str(find_root(None, cwd=Path(start)))
    )


@settings(max_examples=40, deadline=None)
@given(st.tuples(KINDS, KINDS, KINDS), QUERIES)
def test_a_relative_root_resolves_as_pathlib(
    tmp_path_factory: pytest.TempPathFactory, kinds: tuple[str, str, str], query: str
) -> None:
    """`--root sub/dir` (or `.`, `..`) from the current folder, and LOOPX_ROOT set the same way."""
    top = tmp_path_factory.mktemp("relative")
    build(top, kinds)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(top)
        assert outcome(lambda: find_root_text(query)) == outcome(lambda: str(find_root(query)))
        patch.setenv("LOOPX_ROOT", query)
        assert outcome(lambda: find_root_text(None)) == outcome(lambda: str(find_root(None)))
        patch.delenv("LOOPX_ROOT")
        assert outcome(lambda: find_root_text(None)) == outcome(lambda: str(find_root(None)))


def test_a_home_relative_root_expands_as_pathlib(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for home in (str(tmp_path), "", "/", str(tmp_path) + "//"):
        monkeypatch.setenv("HOME", home)
        for text in ("~", "~/x", "~//x/./y", "~nosuchuser-loopx/x", "~root/x"):
            assert outcome(lambda t=text: find_root_text(t)) == outcome(lambda t=text: str(find_root(t)))


ID = st.from_regex(r"[a-z0-9][a-z0-9._-]{0,20}", fullmatch=True).filter(lambda s: ".." not in s)
KEY = st.from_regex(r"[0-9a-f]{64}", fullmatch=True).map(lambda h: "sha256:" + h)


@given(ID, KEY)
def test_a_file_layout_names_the_file_stores_files(goal_id: str, turn_key: str) -> None:
    root = "/srv/project"
    store, layout = FileStore(Path(root)), FileLayout(root)
    assert layout.registry_path == str(store.registry_path)
    for name in ("goal_dir", "goal_path", "ledger_path", "runs_dir", "scheduler_path"):
        assert getattr(layout, name)(goal_id) == str(getattr(store, name)(goal_id)), name
    assert layout.turn_path(goal_id, turn_key) == str(store.turn_path(goal_id, turn_key))


def test_a_lean_store_on_strings_refuses_a_missing_state_as_the_file_store(tmp_path: Path) -> None:
    def refusal(store: Any) -> tuple[object, ...]:
        return outcome(lambda: LeanFileStore(store).read_registry())

    assert refusal(FileLayout(str(tmp_path))) == refusal(FileStore(tmp_path))
    assert refusal(FileLayout(str(tmp_path)))[0] == "NotFoundError"
