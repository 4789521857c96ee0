"""The docs tell the truth: the CLI reference is the real --help, every field is documented."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from loopx_core.quota import EVALUATION_ORDER
from tests.conftest import REPO


def test_cli_reference_is_current() -> None:
    proc = subprocess.run([sys.executable, "scripts/gen_cli_docs.py", "--check"], cwd=REPO, check=False)
    assert proc.returncode == 0, "docs/cli.md is stale: run `make docs`"


def test_every_packet_field_is_documented() -> None:
    text = (REPO / "docs/packet.md").read_text()
    packets = sorted((REPO / "snapshots/test_should_run_matrix").glob("test_packet*.json"))
    import json

    keys: set[str] = set()
    for path in packets:
        packet = json.loads(path.read_text())
        keys |= set(packet)
        for section in (
            "quota",
            "interaction_contract",
            "work_lane_contract",
            "scheduler_hint",
            "settlement_plan",
        ):
            if isinstance(packet.get(section), dict):
                keys |= set(packet[section])
    missing = sorted(k for k in keys if f"`{k}`" not in text and f"{k}" not in text)
    assert not missing, missing


def test_every_state_is_documented() -> None:
    text = (REPO / "docs/quota.md").read_text()
    for state in EVALUATION_ORDER:
        assert f"`{state}`" in text


def test_docs_index_links_resolve() -> None:
    import re

    index = (REPO / "docs/index.md").read_text()
    for target in re.findall(r"\]\(([^)]+\.md)\)", index):
        assert (REPO / "docs" / target).is_file(), target


def test_readme_starts_with_the_two_commands() -> None:
    head = Path(REPO / "README.md").read_text().split("\n## ")[0]
    assert "make demo" in head and "make test" in head


def _python_blocks(page: str) -> list[str]:
    import re

    return re.findall(r"```python\n(.*?)```", (REPO / "docs" / page).read_text(), re.S)


def test_hook_reference_examples_run() -> None:
    blocks = _python_blocks("hooks.md")
    assert len(blocks) >= 4
    for number, block in enumerate(blocks, 1):
        exec(
            compile(block, f"docs/hooks.md example {number}", "exec"), {"__name__": f"hooks_example_{number}"}
        )


def _live_packets(root: Path) -> list[dict]:  # type: ignore[type-arg]
    """Every scenario's packet, built now (not read back from snapshots)."""
    from loopx_core.decide.packet import build_packet, load_inputs
    from loopx_core.store.files import FileStore
    from tests.conftest import Project
    from tests.scenarios import SCENARIOS

    packets = []
    for name, setup in SCENARIOS.items():
        store = FileStore(root / name)
        store.init()
        project = Project(root / name, store)
        ask = setup(project)
        inputs = load_inputs(
            store, "g", ask.agent_id, project.at(ask.minutes), available_capabilities=ask.available
        )
        packets.append(build_packet(inputs))
    return packets


def _row(text: str, field: str) -> str:
    """The docs table row of `field` (the line starting with its backticked name)."""
    rows = [line for line in text.splitlines() if line.startswith(f"| `{field}`")]
    assert len(rows) == 1, field
    return rows[0]


def test_packet_docs_list_every_value_live_packets_take(tmp_path: Path) -> None:
    text = (REPO / "docs/packet.md").read_text()
    packets = _live_packets(tmp_path)
    values = {
        "decision": {p["decision"] for p in packets},
        "effective_action": {p["effective_action"] for p in packets},
        "interaction_contract": {p["interaction_contract"]["mode"] for p in packets},
        "work_lane_contract": {p["work_lane_contract"]["lane"] for p in packets},
        "scheduler_hint": {p["scheduler_hint"]["action"] for p in packets}
        | {p["scheduler_hint"]["cadence_class"] for p in packets},
        "capability_gate": {p["capability_gate"]["action"] for p in packets if "capability_gate" in p},
        "quota": set().union(*(p["quota"] for p in packets)),
    }
    for field, seen in values.items():
        row = _row(text, field)
        missing = sorted(v for v in seen if f"`{v}`" not in row)
        assert not missing, f"docs/packet.md row {field} lacks {missing}"
    top = set().union(*packets)
    assert not sorted(k for k in top if f"`{k}`" not in text)


def test_readme_layout_matches_the_tree() -> None:
    """README's layout names every package and module of loopx_core and every top-level folder,
    and nothing that is not there."""
    layout = (REPO / "README.md").read_text().split("## Layout", 1)[1].split("\n## ", 1)[0]
    core_block = "\n".join(line for line in layout.splitlines() if line.startswith("      "))
    named = set(re.findall(r"\b[\w-]+(?:/|\.py)(?=\s|$)", core_block))
    core = {
        p.name + ("/" if p.is_dir() else "")
        for p in (REPO / "loopx_core").iterdir()
        if p.name not in ("__init__.py", "__pycache__")
    }
    assert sorted(core - named) == [], "README layout lacks these"
    assert sorted(named - core) == [], "README layout names what is not there"
    top_lines = [line for line in layout.splitlines() if line.startswith("    ") and line[4] != " "]
    top = {
        m.split("/")[0]
        for line in top_lines
        for m in re.findall(r"[\w.-]+/", re.split(r"\s{2,}", line.strip())[0])
    }
    folders = {p.name for p in REPO.iterdir() if p.is_dir() and not p.name.startswith(".")}
    assert sorted(folders - top - {"build", "dist"}) == [], "README layout lacks top-level folders"


USER_PAGES = {
    # page: what the project holds before the page's commands run (each a `loopx` argv)
    "troubleshooting.md": [["workflow-skills", "--install", "--surface", "claude-code"]],
    "upgrading.md": [
        ["workflow-skills", "--install", "--surface", s] for s in ("claude-code", "codex-app", "dsh")
    ],
    "removing.md": [
        ["workflow-skills", "--install", "--surface", s] for s in ("claude-code", "codex-app", "dsh")
    ],
    "committing.md": [],
    "platforms.md": [],
}


def page_commands(text: str) -> list[tuple[str, int]]:
    """Each `$ ` line of a page's console blocks, and the exit code it expects (`# exit N`, else 0)."""
    found = []
    for block in re.findall(r"```console\n(.*?)```", text, re.S):
        for line in block.splitlines():
            line = line.strip()
            if line.startswith("$ "):
                command, _, note = line[2:].partition("  # ")
                expected = re.fullmatch(r"exit (\d+)", note.strip())
                found.append((command.strip(), int(expected[1]) if expected else 0))
    return found


def run_page(commands: list[tuple[str, int]], setup: list[list[str]], folder: Path) -> list[str]:
    """Run the commands in a fresh project (after `setup`); the ones that did not exit as expected."""
    from tests.conftest import LOOPX_BIN, T0_ISO

    project = folder / "project"
    project.mkdir()
    env = {**os.environ, "PATH": f"{LOOPX_BIN.parent}{os.pathsep}{os.environ['PATH']}", "LOOPX_NOW": T0_ISO}
    env.pop("LOOPX_ROOT", None)
    first = [
        ["init"],
        ["goal", "add", "--goal-id", "parser", "--objective", "Ship a tested parser"],
        ["agent", "register", "--agent-id", "builder", "--capability", "python"],
        *setup,
    ]
    for argv in first:
        subprocess.run([str(LOOPX_BIN), *argv], cwd=project, env=env, capture_output=True, check=True)
    wrong = []
    for command, expected in commands:
        proc = subprocess.run(
            ["bash", "-c", command], cwd=project, env=env, capture_output=True, text=True, check=False
        )
        if proc.returncode != expected:
            wrong.append(f"{command} -> exit {proc.returncode}, not {expected}: {proc.stderr.strip()[:300]}")
    return wrong


@pytest.mark.parametrize("page", sorted(USER_PAGES))
def test_every_command_of_the_user_pages_runs(page: str, tmp_path: Path) -> None:
    commands = page_commands((REPO / "docs" / page).read_text())
    assert commands, page
    assert run_page(commands, USER_PAGES[page], tmp_path) == []


def test_the_readme_use_block_runs(tmp_path: Path) -> None:
    readme = (REPO / "README.md").read_text()
    use = readme.split("## Use\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"(?:^    \S.*\n)+", use, re.M)
    commands = [line.strip().split("  #")[0].strip() for line in blocks[0].splitlines()]
    assert commands[0] == "loopx init" and len(commands) >= 6
    from tests.conftest import LOOPX_BIN

    project = tmp_path / "project"
    project.mkdir()
    env = {**os.environ, "PATH": f"{LOOPX_BIN.parent}{os.pathsep}{os.environ['PATH']}"}
    env.pop("LOOPX_ROOT", None)
    for command in commands:
        proc = subprocess.run(["bash", "-c", command], cwd=project, env=env, capture_output=True, text=True)
        assert proc.returncode == 0, (command, proc.stderr)
    assert (project / ".loopx/.gitignore").is_file()


def _doc_command_lines() -> list[tuple[str, str]]:
    """(page, command line) for every `loopx ...` line of a code block in README.md and docs/ (not cli.md)."""
    found = []
    for page in [*sorted((REPO / "docs").glob("*.md")), REPO / "README.md"]:
        if page.name == "cli.md":  # generated from the app itself
            continue
        text = page.read_text()
        blocks = re.findall(r"```[a-z]*\n(.*?)```", text, re.S) + re.findall(r"(?:^    \S.*\n)+", text, re.M)
        for block in blocks:
            for line in block.splitlines():
                line = line.strip().removeprefix("$ ")
                if line.startswith("loopx "):
                    for cut in ("  #", " | ", " > ", " && "):
                        line = line.split(cut)[0]
                    found.append((page.name, line.strip()))
    return found


def test_every_loopx_command_in_the_docs_parses() -> None:
    """Each documented `loopx` line names a real command with options it takes, values of the right
    type (commands of the user pages and the README's Use block also run, above)."""
    import shlex

    import typer.main

    from loopx_core.cli.app import app

    root = typer.main.get_command(app)
    lines = _doc_command_lines()
    assert len(lines) >= 40, len(lines)
    wrong = []
    for page, line in lines:
        words = shlex.split(line)[1:]
        if {"--help", "-h", "--version"} & set(words) or any(w.startswith("[") for w in words):
            continue  # help, or a synopsis (`[--option VALUE]`)
        command, name, args = root, "loopx", words
        try:
            while True:
                ctx = command.make_context(name, list(args))  # parses and converts; invokes nothing
                if not hasattr(command, "resolve_command"):
                    break
                # typer vendors click: the words after a group's own options are its `_protected_args`
                rest = [*getattr(ctx, "_protected_args", []), *ctx.args]
                if not rest:
                    break
                name, command, args = command.resolve_command(ctx, rest)
        except Exception as exc:  # a usage error or a value that does not convert
            message = exc.format_message() if hasattr(exc, "format_message") else repr(exc)
            wrong.append(f"{page}: {line}: {message}")
    assert wrong == [], "\n".join(wrong)
