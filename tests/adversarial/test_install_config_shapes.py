"""Class: a user's shared config that LoopX cannot merge into is refused whole, the file untouched.

Installing a facade merges LoopX's keys into files the user owns (Claude Code's
`.claude/settings.json`, Codex's `.codex/config.toml`). When such a file holds something else
where LoopX's part goes (a string, number or array where a table or an array of hooks
belongs, JSON that is no object, text that is not Unicode, TOML that does not parse or
declares a table twice), the install is a conflict (exit 5): the report names the file's
problem in one line, nothing is written anywhere (all or nothing), and the user's file keeps
every byte.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from loopx_core.errors import ExitCode
from tests.conftest import Cli, Project

CLAUDE = ".claude/settings.json"
CODEX = ".codex/config.toml"

CASES = [
    ("claude-code", CLAUDE, b'{"hooks": {"Stop": "x"}}', "hooks.Stop is a string, not an array"),
    ("claude-code", CLAUDE, b'{"hooks": {"Stop": 3}}', "hooks.Stop is a number, not an array"),
    ("claude-code", CLAUDE, b'{"hooks": {"Stop": {"a": 1}}}', "hooks.Stop is a table/object, not an array"),
    ("claude-code", CLAUDE, b'{"hooks": {"Stop": null}}', "hooks.Stop is null, not an array"),
    ("claude-code", CLAUDE, b'{"hooks": null}', "hooks is null, not a table/object"),
    ("claude-code", CLAUDE, b"null", f"{CLAUDE} is null, not a JSON object; left unchanged"),
    ("claude-code", CLAUDE, b'{"hooks": "x"}', "hooks is a string, not a table/object"),
    ("claude-code", CLAUDE, b'{"hooks": []}', "hooks is an array, not a table/object"),
    ("claude-code", CLAUDE, b"[1]", f"{CLAUDE} is an array, not a JSON object; left unchanged"),
    ("claude-code", CLAUDE, b'"text"', f"{CLAUDE} is a string, not a JSON object; left unchanged"),
    (
        "claude-code",
        CLAUDE,
        b'{"hooks": {"Stop": [{"x": "\\ud800"}]}}',
        f"{CLAUDE} holds text that is not valid Unicode; left unchanged",
    ),
    ("codex-app", CODEX, b"mcp_servers = 3\n", "mcp_servers is a number, not a table/object"),
    (
        "codex-app",
        CODEX,
        b"a = \n",
        f"{CODEX} is not valid TOML (Invalid value (at line 1, column 5)); left unchanged",
    ),
    (
        "codex-app",
        CODEX,
        b'[mcp_servers.loopx]\ncommand = "x"\n[mcp_servers.loopx]\n',
        f"{CODEX} is not valid TOML (Cannot declare ('mcp_servers', 'loopx') twice (at line 3, column 19)); "
        "left unchanged",
    ),
]


def tree(root: Path) -> dict[str, bytes]:
    """Every file under `root` but LoopX's own state, by relative path."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".loopx" not in p.relative_to(root).parts
    }


@pytest.mark.parametrize(("host", "rel", "content", "problem"), CASES)
def test_a_config_loopx_cannot_merge_into_is_a_conflict_and_untouched(
    cli: Cli, project: Project, host: str, rel: str, content: bytes, problem: str
) -> None:
    (project.root / rel).parent.mkdir(parents=True)
    (project.root / rel).write_bytes(content)
    before = tree(project.root)
    result = cli(
        "workflow-skills", "--install", "--surface", host, "--target", str(project.root), "-f", "json"
    )
    assert result.exit_code == ExitCode.CONFLICT, result.stderr
    report = result.json()
    assert report["written"] is False  # type: ignore[index]
    conflicts = [(f["path"], f["detail"]) for f in report["files"] if f["status"] == "conflict"]  # type: ignore[index]
    assert conflicts == [(rel, problem)]
    assert tree(project.root) == before
    assert str(project.root) not in problem
