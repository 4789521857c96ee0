"""Class: a stored file that cannot be written or read whole, refused in one line, nothing left behind.

`atomic_write_bytes` writes a temporary file beside the target and renames it over: when any
step fails (the folder cannot be made because a file is in its way, the target is a folder, a
name is too long for the system, the data is not bytes) the target is as it was, no temporary
file is left, and an `OSError` becomes one `StateInvalidError` (exit 4) naming the file by its
last two parts, never its full path. `read_bytes` refuses a file whose name the system refuses,
one the kernel cannot read (an I/O error) and one that turns out bigger than its size said
(procfs files report 0 bytes): one line, exit 4, the file named as shown.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopx_core.errors import ExitCode, StateInvalidError
from loopx_core.store.atomic import NotAFileError, atomic_write_bytes, read_bytes

DATA = st.binary(max_size=64)


def tree(top: Path) -> dict[str, bytes | None]:
    """Every entry under `top` and its bytes (None for a folder)."""
    return {str(p.relative_to(top)): None if p.is_dir() else p.read_bytes() for p in sorted(top.rglob("*"))}


def refusal(path: Path | str, data: object) -> StateInvalidError:
    """The error `atomic_write_bytes` raises for `path`, checked to be one plain line."""
    with pytest.raises(StateInvalidError) as caught:
        atomic_write_bytes(path, data)  # type: ignore[arg-type]
    error = caught.value
    assert error.exit_code == ExitCode.STATE_INVALID
    assert "\n" not in error.message
    assert str(Path(path).parent.parent) not in error.message  # never the full path
    return error


@settings(max_examples=25, deadline=None)
@given(DATA, st.sampled_from(["", "/deeper"]))
def test_a_file_where_the_folder_goes_is_refused_and_kept(
    tmp_path_factory: pytest.TempPathFactory, data: bytes, deeper: str
) -> None:
    top = tmp_path_factory.mktemp("blocked")
    (top / "goal").write_bytes(b"a file, not a folder")
    before = tree(top)
    error = refusal(str(top / "goal") + deeper + "/state.json", data)
    assert error.message.startswith(f"cannot write {'deeper' if deeper else 'goal'}/state.json: ")
    assert error.message.endswith(("File exists", "Not a directory"))
    assert tree(top) == before


@settings(max_examples=25, deadline=None)
@given(DATA, st.booleans())
def test_a_folder_at_the_target_is_refused_and_no_temporary_file_stays(
    tmp_path_factory: pytest.TempPathFactory, data: bytes, full: bool
) -> None:
    top = tmp_path_factory.mktemp("target")
    (top / "state.json").mkdir()
    if full:
        (top / "state.json" / "inside").write_bytes(b"kept")
    before = tree(top)
    error = refusal(top / "state.json", data)
    assert error.message.startswith(f"cannot write {top.name}/state.json: ")
    assert tree(top) == before  # the temporary file beside it was removed


def test_a_name_too_long_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    error = refusal(tmp_path / ("n" * 300), b"x")
    assert error.message == f"cannot write {tmp_path.name}/{'n' * 300}: File name too long"
    assert list(tmp_path.iterdir()) == []


def test_data_that_is_not_bytes_raises_its_own_error_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    (tmp_path / "state.json").write_bytes(b"old")
    with pytest.raises(TypeError):
        atomic_write_bytes(tmp_path / "state.json", "text, not bytes")  # type: ignore[arg-type]
    assert tree(tmp_path) == {"state.json": b"old"}


def test_a_name_the_system_refuses_is_unreadable_not_missing(tmp_path: Path) -> None:
    with pytest.raises(StateInvalidError) as caught:
        read_bytes(tmp_path / ("n" * 300), what="goal state", root=tmp_path)
    assert caught.value.message == f"goal state unreadable at {'n' * 300}: File name too long"
    assert caught.value.exit_code == ExitCode.STATE_INVALID
    assert os.strerror(errno.ENAMETOOLONG) in caught.value.message


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="needs procfs")
def test_a_read_the_kernel_fails_is_one_line() -> None:
    # /proc/self/mem is a regular file of size 0 whose offset 0 is unmapped: read() fails (EIO)
    with pytest.raises(StateInvalidError) as caught:
        read_bytes("/proc/self/mem", what="ledger", root="/proc")
    assert caught.value.message == "ledger unreadable at self/mem: Input/output error"
    assert not isinstance(caught.value, NotAFileError)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs procfs")
@pytest.mark.parametrize("limit", [1, 16, 64])
def test_a_file_longer_than_its_size_said_is_capped_while_read(limit: int) -> None:
    assert os.stat("/proc/self/status").st_size == 0  # what makes the cap at open time pass
    with pytest.raises(NotAFileError) as caught:
        read_bytes("/proc/self/status", what="run record", root="/proc", limit=limit)
    message = caught.value.message
    assert message.startswith("run record at self/status is 0 MiB, over the 0 MiB a LoopX file may be")
    assert message.endswith("move it aside (`loopx doctor` reports it)")
    assert caught.value.exit_code == ExitCode.STATE_INVALID
    assert read_bytes("/proc/self/status", what="run record")[0].startswith(b"Name:")
