"""docs/write-a-host-plugin.md, followed step by step as a new user would: it ends in a working plugin.

The page's ```console blocks are run in order (each `$ ` line is one command; the other lines are
sample output, not checked), and its ```LANG title="PATH" blocks are written to PATH, all in
one shell in an empty folder whose HOME and host homes are temporary. One substitution: the
page's `pip install loopx-kit` installs a wheel of this repository instead of the release on
PyPI. `python` on PATH is the interpreter running the tests, outside any virtual environment.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.wheels import clean_env

PAGE = REPO / "docs/write-a-host-plugin.md"
BLOCK = re.compile(r'^```(?:console|\w+ title="(?P<path>[^"]+)")\n(?P<body>.*?)^```$', re.S | re.M)
INSTALL_LOOPX = "pip install loopx-kit"


def steps(page: str) -> list[tuple[str, str]]:
    """("run", command) and ("write", path) + text, in the order the page gives them."""
    found: list[tuple[str, str]] = []
    for match in BLOCK.finditer(page):
        if match["path"]:
            found.append(("write", match["path"] + "\n" + match["body"]))
            continue
        found += [("run", line[2:]) for line in match["body"].splitlines() if line.startswith("$ ")]
    return found


def script(page: str, wheel: Path) -> str:
    """One bash script doing every step; it stops at the first command that fails and names it."""
    lines = ["set -u"]
    for kind, text in steps(page):
        if kind == "write":
            path, body = text.split("\n", 1)
            lines += [
                f"mkdir -p {shlex.quote(str(Path(path).parent))}",
                f"cat > {shlex.quote(path)} <<'TUTORIAL_EOF'",
            ]
            lines += [body.rstrip("\n"), "TUTORIAL_EOF"]
            continue
        command = f"pip install {shlex.quote(str(wheel))}" if text == INSTALL_LOOPX else text
        lines += [
            f"echo {shlex.quote('$ ' + text)}",
            f"{command} || {{ echo {shlex.quote('tutorial step failed: ' + text)} >&2; exit 1; }}",
        ]
    return "\n".join(lines) + "\n"


def test_the_page_has_the_steps_the_test_relies_on() -> None:
    found = steps(PAGE.read_text())
    commands = [text for kind, text in found if kind == "run"]
    assert commands[:3] == ["python -m venv .venv", ". .venv/bin/activate", INSTALL_LOOPX]
    assert 'loopx hosts scaffold acme-ide --title "Acme IDE"' in commands
    assert commands.count("pytest") == 2
    writes = [text.split("\n", 1)[0] for kind, text in found if kind == "write"]
    assert writes == [
        "src/loopx_host_acme_ide/templates/loopx-status.md.j2",
        "src/loopx_host_acme_ide/plugin.py",
    ]


def _plain_python(section: str) -> list[str]:
    """The untitled ```python blocks of one `## ` section of the page."""
    text = PAGE.read_text().split("\n## ")
    (body,) = [part for part in text if part.startswith(section)]
    return re.findall(r"^```python\n(.*?)^```$", body, re.S | re.M)


def test_the_page_shows_the_plugin_the_scaffold_writes_and_grows_it_by_two_lines() -> None:
    from loopx_core.hosts import scaffold

    generated = scaffold.render(scaffold.names("acme-ide", "Acme IDE"))["src/loopx_host_acme_ide/plugin.py"]
    (shown,) = [block for block in _plain_python("2. Scaffold") if "class AcmeIde" in block]
    assert shown == generated
    (grown,) = [
        text.split("\n", 1)[1]
        for kind, text in steps(PAGE.read_text())
        if text.startswith("src/loopx_host_acme_ide/plugin.py")
    ]
    removed = [
        line for line in difflib.ndiff(generated.splitlines(), grown.splitlines()) if line.startswith("- ")
    ]
    added = [
        line for line in difflib.ndiff(generated.splitlines(), grown.splitlines()) if line.startswith("+ ")
    ]
    assert removed == [] and len(added) == 2, added


def test_the_worked_example_quotes_the_codex_plugin() -> None:
    source = {line.strip() for line in (REPO / "plugins/loopx_codex_app/plugin.py").read_text().splitlines()}
    blocks = _plain_python("6. A worked example")
    assert len(blocks) == 3
    for block in blocks:
        for line in block.splitlines():
            assert not line.strip() or line.strip() in source, line


@pytest.mark.slow
def test_following_the_tutorial_ends_in_a_working_plugin(tmp_path: Path, loopx_wheel: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(os.path.realpath(sys.executable))  # the base interpreter: no venv
    work = tmp_path / "work"
    work.mkdir()
    env = clean_env(tmp_path, bin_dir)
    proc = subprocess.run(
        ["bash", "-c", script(PAGE.read_text(), loopx_wheel)],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-6000:]
    assert "tutorial step failed" not in proc.stderr

    loopx = work / ".venv/bin/loopx"
    listed = json.loads(subprocess.check_output([loopx, "hosts", "list", "-f", "json"], env=env, cwd=work))
    assert "acme-ide" in [h["name"] for h in listed["hosts"]]
    demo = work / "demo"
    assert not (demo / ".acme-ide").exists()  # the tutorial ends with an uninstall
    check = subprocess.run(
        [loopx, "workflow-skills", "--install", "--surface", "acme-ide", "-g", "demo", "-a", "builder"],
        env=env,
        cwd=demo,
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 0, check.stderr
    command = (demo / ".acme-ide/commands/loopx-status.md").read_text()  # the file step 4 added
    assert "loopx quota should-run --goal-id demo --agent-id builder --surface acme-ide" in command
    snapshots = (work / "loopx-host-acme-ide/tests/__snapshots__/test_facade.ambr").read_text()
    assert "commands/loopx-status.md" in snapshots
