"""Class: a hook's start compiling regular expressions it can answer without.

Observed (session 11): every `loopx hook NAME` compiled three patterns the tick never does (a
base name's, a plain module name's, the distribution-name normalization's), about 0.1 ms each
on a 30 ms hook. Each is now a plain string check; these prove each answers exactly as its
pattern, for generated names over the characters that matter (letters, digits, the separators,
a newline, non-ASCII look-alikes), and that no hook compiles any of them.
"""

from __future__ import annotations

import importlib.metadata
import json
import re
import subprocess
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from loopx_codex_app.plugin import _ID, is_id_part
from loopx_core.distributions import normalized
from loopx_core.hosts import builtin
from loopx_core.hosts.model import _BASE_NAME, BASE_NAME, is_base_name
from tests.builders import demo_project
from tests.conftest import T0_ISO
from tests.probe import NO_COVERAGE, REPO

ALPHABET = st.sampled_from([*"abzAZ_09.-", "\n", " ", "\u0131", "\u00e9", "\uff41", "\u0661", "\u212a"])
NAMES = st.text(ALPHABET, max_size=12) | st.text(max_size=12)
PLAIN_MODULE = r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*"


@given(NAMES)
def test_is_id_part_answers_as_the_automation_ids_pattern(name: str) -> None:
    assert is_id_part(name) is bool(re.match(_ID, name))


@given(NAMES)
def test_is_base_name_answers_as_base_names_pattern(name: str) -> None:
    assert is_base_name(name) is bool(re.match(_BASE_NAME, name))
    assert is_base_name(name) is bool(BASE_NAME.match(name))  # the compiled constant, still there


@given(NAMES)
def test_plain_module_answers_as_its_pattern(value: str) -> None:
    assert builtin.plain_module(value) is bool(re.fullmatch(PLAIN_MODULE, value))


@given(NAMES)
def test_normalized_answers_as_importlib_metadatas_normalize(name: str) -> None:
    assert normalized(name) == importlib.metadata.Prepared.normalize(name)  # type: ignore[attr-defined]
    assert normalized(name) == re.sub(r"[-_.]+", "-", name).lower().replace("-", "_")


_COMPILED = """\
import json, re, sys
from loopx_core.cli.entry import main
try:
    main(json.loads(sys.argv[1]))
except SystemExit:
    pass
print(json.dumps(sorted(str(key[1]) for key in re._cache)), file=sys.stderr)
"""
"""`loopx ARGV` in a fresh interpreter, then every pattern re's cache holds (what it compiled)."""


def test_a_hook_compiles_none_of_the_patterns(tmp_path: Path) -> None:
    root = demo_project(tmp_path)
    argv = ["--root", str(root), "hook", "claude-stop", "-g", "demo", "-a", "builder"]
    proc = subprocess.run(
        [sys.executable, "-c", _COMPILED, json.dumps(argv)],
        input=json.dumps({"session_id": "s1", "cwd": str(root)}),
        capture_output=True,
        text=True,
        env={**NO_COVERAGE, "LOOPX_NOW": T0_ISO, "PATH": "", "HOME": str(root)},
        cwd=REPO,
        check=True,
    )
    assert '"decision": "block"' in proc.stdout  # the hook ran its host's code, the registry's checks too
    compiled = set(json.loads(proc.stderr.strip().splitlines()[-1]))
    assert compiled & {_BASE_NAME, PLAIN_MODULE, "[-_.]+"} == set()
