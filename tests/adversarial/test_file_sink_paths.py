"""Class: a `file://` sink whose path cannot take an append fails that delivery alone, in one line.

Beside tests/adversarial/test_file_sink_kinds.py (something that is no regular file at the
path), the path itself can be wrong: a file where a folder of it should be, a symbolic link
to nothing, a symbolic link to a regular file (LoopX never appends through a link), a name
with a NUL. Each is that sink's one-line error naming the file by its name (never the
project's full path), the other sinks still get the notice, nothing is written through the
link, and a retried delivery of a notice the file already holds appends nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from loopx_core.errors import ExitCode, UsageError
from loopx_core.notices import events
from loopx_core.notices.sinks import FileSink, SinkError, SinkKinds
from tests.conftest import T0, Cli, Project


def _file_in_the_way(root: Path) -> None:
    (root / "afile").write_text("a file where a folder goes")


def _dangling(root: Path) -> None:
    (root / "n.jsonl").symlink_to("nowhere.jsonl")


def _link_to_file(root: Path) -> None:
    (root / "real.jsonl").write_text("{}\n")
    (root / "n.jsonl").symlink_to("real.jsonl")


CASES: dict[str, tuple[Callable[[Path], None], str, str]] = {
    "a file where the folder goes": (
        _file_in_the_way,
        "file://afile/n.jsonl",
        "cannot append to n.jsonl: Not a directory",
    ),
    "a link to nothing": (
        _dangling,
        "file://n.jsonl",
        "cannot append to n.jsonl: append-only file at project/n.jsonl is a symbolic link to nothing, "
        "not a regular file: move it aside (`loopx doctor` reports it)",
    ),
    "a link to a file": (
        _link_to_file,
        "file://n.jsonl",
        "cannot append to n.jsonl: project/n.jsonl is a symbolic link: LoopX never appends through one "
        "(it may name a file outside .loopx/); put the file itself there",
    ),
}


def snapshot(root: Path) -> dict[str, bytes | str]:
    """What the project folder holds outside .loopx/ (a link as its target)."""
    found: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        if ".loopx" in path.relative_to(root).parts or path.is_dir():
            continue
        found[str(path.relative_to(root))] = (
            f"-> {path.readlink()}" if path.is_symlink() else path.read_bytes()
        )
    return found


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_sink_path_that_cannot_take_an_append_fails_alone(cli: Cli, project: Project, case: str) -> None:
    make, url, error = CASES[case]
    make(project.root)
    before = snapshot(project.root)
    for sink in (url, "file://good.jsonl"):
        added = cli("notify", "add", sink, "-f", "json")
        assert added.exit_code == 0, added.stderr
    result = cli("notify", "test", "-f", "json")
    assert result.exit_code == ExitCode.REFUSED, result.stderr  # sink_failed: exit 7
    report = json.loads(result.stdout.splitlines()[0])
    outcome = {r["url"]: (r["ok"], r["error"]) for r in report["results"]}
    assert outcome == {url: (False, error), "file://good.jsonl": (True, None)}
    assert result.stderr.count("\n") == 1 and str(project.root) not in result.stdout + result.stderr
    after = snapshot(project.root)
    assert len(after.pop("good.jsonl").splitlines()) == 1  # type: ignore[union-attr]
    assert after == before  # nothing written where the sink points, nor through the link


def test_a_nul_in_the_file_name_is_refused_when_added() -> None:
    with pytest.raises(UsageError) as caught:
        SinkKinds().check("file://n\x00.jsonl")
    assert caught.value.message == "the file name holds a NUL character"
    assert caught.value.exit_code == ExitCode.USAGE


def test_a_retried_delivery_appends_nothing_twice(project: Project) -> None:
    notice = events.blocked_health("g", None, "state broken", T0)
    other = events.blocked_health("h", None, "state broken", T0)
    sink = FileSink()
    for each in (notice, notice, other, notice, other):
        sink.send("file://n.jsonl", each, project.root)
    lines = [json.loads(line) for line in (project.root / "n.jsonl").read_text().splitlines()]
    assert [line["notice_id"] for line in lines] == [notice.notice_id, other.notice_id]


def test_a_name_too_long_is_one_error_naming_no_path(project: Project) -> None:
    notice = events.blocked_health("g", None, "state broken", T0)
    with pytest.raises(SinkError) as caught:
        FileSink().send("file://" + "n" * 300, notice, project.root)
    assert str(caught.value) == f"cannot append to {'n' * 300}: File name too long"
    assert list(project.root.iterdir()) == [project.root / ".loopx"]
