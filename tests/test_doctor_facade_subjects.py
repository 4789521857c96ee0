"""A project facade whose goal or agent the project no longer has is a doctor finding, and its
hint's uninstall command ends it (every installed hook would otherwise answer "not found")."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from tests.builders import demo_project
from tests.conftest import run_loopx


def _findings(root: Path) -> list[dict[str, object]]:
    out = run_loopx("doctor", "--check", "installation", "-f", "json", root=root)
    return [f for f in json.loads(out.stdout)["findings"] if f["code"] == "facade_subject_missing"]


@pytest.mark.parametrize("surface", ["claude-code", "codex-app", "dsh"])
@pytest.mark.parametrize("gone", ["agent", "goal"])
def test_a_facade_that_drives_a_goal_or_agent_gone_is_found(tmp_path: Path, surface: str, gone: str) -> None:
    root = demo_project(tmp_path / "p")
    out = run_loopx(
        "workflow-skills", "--install", "--surface", surface, "-g", "demo", "-a", "builder", root=root
    )
    assert out.exit_code == 0, out.stderr
    assert _findings(root) == []
    if gone == "agent":
        assert run_loopx("agent", "remove", "-a", "builder", root=root).exit_code == 0
    else:  # a goal gone from the registry (a registry restored from an older backup)
        registry = root / ".loopx/registry.json"
        data = json.loads(registry.read_text())
        del data["goals"]["demo"]
        registry.write_text(json.dumps(data, indent=2) + "\n")
    [finding] = _findings(root)
    assert ("agent 'builder'" if gone == "agent" else "goal 'demo'") in str(finding["message"])
    hint = str(finding["hint"])
    command = hint[hint.index("loopx workflow-skills") :]
    assert run_loopx(*shlex.split(command)[1:], root=root).exit_code == 0, command
    assert _findings(root) == []
