"""Class: LoopX's stand-in for pydantic's plugin loader makes pydantic do something else.

`loopx_core.models.plugin_loader` keeps `importlib.metadata` out of a command by answering
pydantic's `get_plugins()` itself when no distribution declares a `pydantic` entry point. It
must never hide a plugin, never swallow an error pydantic's loader would raise, and never leak:
- on generated `site` folders (sections, entries, comments, broken lines, bytes that are not
  UTF-8, files where folders should be), whenever the scan says which groups are declared,
  importlib.metadata reads every entry point there without an error and declares no other group;
- a command run beside a real pydantic plugin calls that plugin for LoopX's models (pydantic's
  own loader ran); without one it loads no `importlib.metadata` and uses the stand-in;
- any other name asked of the stand-in is pydantic's own loader's, which then takes its place;
- the environment a validation command (a child LoopX starts) sees is the one LoopX was given.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import shlex
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopx_core.models.plugin_loader import GROUP, declared_groups
from tests.builders import demo_project
from tests.conftest import run_loopx
from tests.probe import probe

LINES = [
    "[console_scripts]",
    "[pydantic]",
    "[[pydantic]]",
    "[ pydantic ]",
    "[loopx]",
    "[]",
    "tool = pkg.cli:main",
    "probe=pkg:plugin",
    " spaced  =  value ",
    "a line without an equals sign",
    "# a comment",
    "; not a comment",
    "",
    "   ",
    "\ufeff[pydantic]",
    "x = y = z",
]


@st.composite
def distributions(draw: st.DrawFn) -> list[tuple[str, str, bytes | None]]:
    """(folder name, how entry_points.txt is kept, its bytes) for a few distributions."""
    found = []
    for n in range(draw(st.integers(0, 4))):
        name = draw(st.sampled_from([f"dist{n}-1.0.dist-info", f"Dist{n}.egg-info", f"dist{n}.dist-info"]))
        kind = draw(st.sampled_from(["file", "file", "file", "none", "folder", "info-file"]))
        lines = draw(st.lists(st.sampled_from(LINES), max_size=6))
        data = "\n".join(lines).encode()
        if draw(st.integers(0, 9)) == 0:
            data += b"\xff\xfe"  # not UTF-8
        found.append((name, kind, data))
    return found


def _site(folder: Path, dists: list[tuple[str, str, bytes | None]]) -> None:
    for name, kind, data in dists:
        info = folder / name
        if kind == "info-file":  # an egg-info file (PKG-INFO alone), not a folder
            info.write_text("Metadata-Version: 1.0\n")
            continue
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name.split('-')[0]}\n")
        if kind == "file":
            (info / "entry_points.txt").write_bytes(data or b"")
        elif kind == "folder":
            (info / "entry_points.txt").mkdir()


@settings(max_examples=300, deadline=None)
@given(distributions())
def test_what_the_scan_is_sure_of_importlib_metadata_reads_alike(
    tmp_path_factory: pytest.TempPathFactory, dists: list[tuple[str, str, bytes | None]]
) -> None:
    folder = tmp_path_factory.mktemp("site")  # a fresh folder: importlib.metadata caches by mtime
    _site(folder, dists)
    groups = declared_groups([str(folder)])
    saved = sys.path[:]
    sys.path[:] = [str(folder)]
    try:
        plugins = list(importlib.metadata.entry_points(group=GROUP))  # pydantic's loader's own call
        every = {entry.group for dist in importlib.metadata.distributions() for entry in dist.entry_points}
        error = None
    except Exception as exc:  # what pydantic's loader would raise at the first model build
        plugins, every, error = [], set(), exc
    finally:
        sys.path[:] = saved
    if groups is None:  # unsure: only where importlib.metadata fails or the scan cannot tell
        assert error is not None or any(kind == "folder" for _, kind, _ in dists), dists
        return
    assert error is None, (dists, error)
    assert every <= groups, dists
    if GROUP not in groups:
        assert not plugins, dists


def test_a_plain_site_is_sure() -> None:
    """The scan is not vacuous: the folders this suite runs from declare no pydantic plugin."""
    groups = declared_groups(sys.path)
    assert groups is not None and GROUP not in groups and "console_scripts" in groups


def _plugin_site(folder: Path) -> Path:
    """A site folder with a pydantic plugin that writes the name of every schema it is shown."""
    info = folder / "h3_probe_plugin-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: h3-probe-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pydantic]\nprobe = h3_probe_plugin:plugin\n")
    (folder / "h3_probe_plugin.py").write_text(
        "import os\n"
        "class Plugin:\n"
        "    def new_schema_validator(self, schema, schema_type, path, kind, config, settings):\n"
        "        with open(os.environ['H3_PLUGIN_SEEN'], 'a') as seen:\n"
        "            seen.write(path.name + '\\n')\n"
        "        return None, None, None\n"
        "plugin = Plugin()\n"
    )
    return folder


TURN = ["turn", "begin", "-g", "demo", "-a", "builder", "-t", "t1"]
WRITE = ["todo", "add", "-g", "demo", "--title", "More"]
"""A command that writes through the pydantic models (a settlement command writes lean objects)."""


def test_a_declared_plugin_is_called_for_loopx_models(tmp_path: Path) -> None:
    root = demo_project(tmp_path / "project")
    seen = tmp_path / "seen.txt"
    site = _plugin_site(tmp_path / "site")
    done = probe(root, WRITE, env={"PYTHONPATH": str(site), "H3_PLUGIN_SEEN": str(seen)})
    assert done.exit_code == 0, done.stdout
    assert "importlib.metadata" in done.modules
    assert {"Registry", "GoalState", "Todo"} <= set(seen.read_text().split())


def test_without_a_plugin_a_command_loads_no_entry_point_scan(tmp_path: Path) -> None:
    root = demo_project(tmp_path / "project")
    done = probe(root, WRITE)
    assert done.exit_code == 0, done.stdout
    assert "pydantic" in done.tops({"pydantic"})  # it validated and wrote through pydantic
    assert not {"importlib.metadata", "email", "zipfile", "csv"} & done.modules


def test_the_general_path_keeps_pydantics_loader(tmp_path: Path) -> None:
    """`LOOPX_NO_FAST_PATH=1` (tests compare both ways) leaves pydantic's loader in place."""
    root = demo_project(tmp_path / "project")
    done = probe(root, TURN, env={"LOOPX_NO_FAST_PATH": "1"})
    assert done.exit_code == 0 and "importlib.metadata" in done.modules


_OTHER_NAME = """\
import sys
from loopx_core.models import plugin_loader
assert plugin_loader.install()
stand_in = sys.modules[plugin_loader.LOADER]
from pydantic.plugin._loader import entry_points  # a name only pydantic's own loader has
real = sys.modules[plugin_loader.LOADER]
import pydantic.plugin._loader as again
print(type(stand_in).__name__, real is not stand_in, again is real, list(real.get_plugins()),
      entry_points.__module__)
"""


def test_any_other_name_is_pydantics_own_loader() -> None:
    import subprocess

    proc = subprocess.run(
        [sys.executable, "-c", _OTHER_NAME],
        capture_output=True,
        text=True,
        env={"PATH": "", "LOOPX_COVERAGE": "off"},
        check=True,
    )
    assert proc.stdout.split() == ["StandIn", "True", "True", "[]", "importlib.metadata"]


def test_a_child_sees_the_environment_loopx_was_given(tmp_path: Path) -> None:
    """The stand-in is this process's: a validation command gets LoopX's environment unchanged."""
    root = demo_project(tmp_path / "project")
    begun = run_loopx(*TURN, "-f", "json", root=root)
    key = json.loads(begun.stdout)["turn_key"]
    dump = tmp_path / "env.json"
    script = tmp_path / "dump_env.py"
    script.write_text(f"import json, os\njson.dump(dict(os.environ), open({str(dump)!r}, 'w'))\n")
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"
    given = {"H3_MARK": "1"}
    done = run_loopx(
        *("writeback", "-g", "demo", "-a", "builder", "-k", key, "-s", "ran"),
        *("--validation-command", command),
        root=root,
        env=given,
    )
    assert done.exit_code == 0, done.stderr
    child = json.loads(dump.read_text())
    parent = {**os.environ, "LOOPX_NOW": child["LOOPX_NOW"], **given}
    assert {k: v for k, v in child.items() if k not in ("PWD", "OLDPWD", "SHLVL", "_")} == {
        k: v for k, v in parent.items() if k not in ("PWD", "OLDPWD", "SHLVL", "_")
    }
    assert "PYDANTIC_DISABLE_PLUGINS" not in child
