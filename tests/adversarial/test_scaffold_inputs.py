"""Class: `loopx hosts scaffold` writes a package that parses, whole, or refuses in one line.

Observed: `--title 'A "quoted" title'` (or one with a backslash, a line break, an escape)
wrote a pyproject.toml and a plugin.py that do not parse, and said it had succeeded; a
300-character name was `internal error: OSError: File name too long`; `--dir` naming a
file, or a folder that cannot be written, was an internal error; a failure half-way left a
half-written folder that the next attempt refused as "not empty"; "exists and is not empty"
named the folder by its absolute path.

Now a title holding a quote, a backslash or a control character is refused (it is written
into Python and TOML strings), a name is at most 64 characters, `--dir` must be a folder,
the package is written beside its place and renamed in whole, and messages name folders
relative to the working folder. Generated: titles and names; every package written parses
(Python by `ast`, TOML by `tomllib`) and its plugin's `title` is the title given.
"""

from __future__ import annotations

import ast
import json
import tomllib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loopx_core.errors import UsageError
from loopx_core.hosts import scaffold
from tests.conftest import Cli

TITLES = st.one_of(
    st.text(max_size=30),
    st.sampled_from(
        ['A "quoted" title', "line\nbreak", "back\\slash", '"""', "'''", "\x1b[31mred", "Acme's IDE"]
    ),
)
NAMES = st.from_regex(r"[a-z][a-z0-9]{0,40}(-[a-z0-9]{1,20}){0,4}", fullmatch=True)


def _title_in(plugin_py: str) -> str:
    """The `title = "..."` the generated plugin class declares."""
    for node in ast.walk(ast.parse(plugin_py)):
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "title":
            assert isinstance(node.value, ast.Constant)
            return str(node.value.value)
    raise AssertionError("no title in the plugin")


@given(name=NAMES, title=st.none() | TITLES)
def test_a_package_parses_and_keeps_its_title_or_is_refused(name: str, title: str | None) -> None:
    try:
        plugin = scaffold.names(name, title)
    except UsageError as refused:
        assert "\n" not in refused.message and len(refused.message) < 300
        assert len(name) > scaffold.MAX_NAME or title is not None
        return
    files = scaffold.render(plugin)
    for rel, text in files.items():
        if rel.endswith(".py"):
            ast.parse(text, rel)
        elif rel.endswith(".toml"):
            tomllib.loads(text)
    assert _title_in(files[f"src/{plugin.module}/plugin.py"]) == plugin.title
    assert title is None or plugin.title == title.strip()


@pytest.mark.parametrize("title", ['A "quoted" title', "line\nbreak", "back\\slash", "tab\there", "x\u2028y"])
def test_the_observed_titles_are_refused(title: str) -> None:
    with pytest.raises(UsageError, match="--title must not hold"):
        scaffold.names("acme-ide", title)


def test_a_name_too_long_for_a_folder_is_refused() -> None:
    with pytest.raises(UsageError, match="at most 64 characters"):
        scaffold.names("a" * 300)


def _scaffold(cli: Cli, *args: str) -> tuple[int, dict[str, object]]:
    result = cli("hosts", "scaffold", "acme-ide", *args, "-f", "json")
    return result.exit_code, json.loads(result.stdout)


def test_a_dir_that_is_no_folder_is_one_usage_line(cli: Cli, tmp_path: Path) -> None:
    tmp_path = tmp_path / "work"  # beside the cli fixture's project
    tmp_path.mkdir()
    afile = tmp_path / "afile"
    afile.write_text("x")
    for where in (afile, afile / "sub"):
        code, data = _scaffold(cli, "--dir", str(where))
        assert code == 2 and data["error"]["message"] == "--dir must be a folder (or a path to make one)"  # type: ignore[index]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


def test_an_unwritable_dir_is_refused_and_leaves_nothing(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A full disk cannot be made here (and root writes anywhere): the fourth write fails as one would.
    real = Path.write_text
    written: list[Path] = []

    def fail_half_way(self: Path, *args: object, **kwargs: object) -> int:
        if len(written) == 3:
            raise OSError(28, "No space left on device")
        written.append(self)
        return real(self, *args, **kwargs)  # type: ignore[arg-type]

    tmp_path = tmp_path / "work"
    tmp_path.mkdir()
    monkeypatch.setattr(Path, "write_text", fail_half_way)
    code, data = _scaffold(cli, "--dir", str(tmp_path))
    assert code == 7 and "No space left on device" in data["error"]["message"], data  # type: ignore[index]
    assert str(tmp_path) not in json.dumps(data)
    assert list(tmp_path.iterdir()) == []  # no half-written package, no staging folder
    monkeypatch.setattr(Path, "write_text", real)
    code, data = _scaffold(cli, "--dir", str(tmp_path))
    assert code == 0 and (tmp_path / "loopx-host-acme-ide" / "pyproject.toml").is_file(), data
    assert sorted(p.name for p in tmp_path.iterdir()) == ["loopx-host-acme-ide"]


def test_not_empty_names_no_absolute_path(cli: Cli, tmp_path: Path) -> None:
    tmp_path = tmp_path / "work"
    assert _scaffold(cli, "--dir", str(tmp_path))[0] == 0
    code, data = _scaffold(cli, "--dir", str(tmp_path))
    assert code == 7 and str(tmp_path) not in data["error"]["message"], data  # type: ignore[index]
