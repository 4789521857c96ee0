"""Class: merging into files the user already has. Whatever a shared file holds, a merge either
gives a file that re-parses with a strict parser and keeps every foreign key, or it is one clear
conflict and nothing at all is written (unless --force).

The observed cases of issue 9 (item 5) are one test each; two generated-input tests prove the
class: one on the merge itself, one driving install/check/uninstall over random target states.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import tomllib
from pathlib import Path
from typing import Any

import pytest
import tomlkit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopx_core.errors import ConflictError
from loopx_installer import merge
from tests.builders import tree
from tests.conftest import Cli

MCP_FRAGMENT = merge.Fragment(
    '{"mcpServers": {"loopx": {"command": "loopx", "args": ["mcp", "serve"]}}}', (("mcpServers", "loopx"),)
)
HOOK_FRAGMENT = merge.Fragment(
    json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "loopx hook claude-stop"}]}]}}),
    (("hooks", "Stop", "[]"),),
)
TOML_FRAGMENT = merge.Fragment(
    '[mcp_servers.loopx]\ncommand = "loopx"\nargs = ["mcp", "serve"]\n', (("mcp_servers", "loopx"),)
)
DOCUMENTED = {0, 2, 4, 5, 7, 8, 9}
"""Exit codes `workflow-skills` may end with (docs/installer.md)."""


def skills(cli: Cli, *args: str) -> Any:
    """`loopx workflow-skills ARGS` (in-process: an exception would fail the test)."""
    result = cli("workflow-skills", *args)
    assert "Traceback" not in result.stdout + result.stderr
    return result


def test_inline_mcp_servers_table_round_trips(cli: Cli, tmp_path: Path) -> None:
    """Item 5: `mcp_servers = { other = { command = "x" } }` stays valid TOML and keeps `other`."""
    target = tmp_path / "proj"
    (target / ".codex").mkdir(parents=True)
    config = target / ".codex/config.toml"
    original = 'mcp_servers = { other = { command = "x" } }\n'
    config.write_text(original)
    result = skills(
        cli, "--install", "--surface", "codex-app", "--target", str(target), "--loopx-command", "loopx"
    )
    assert result.exit_code == 0, result.stdout
    data = tomllib.loads(config.read_text())
    assert data["mcp_servers"]["other"] == {"command": "x"}
    assert data["mcp_servers"]["loopx"]["args"] == ["mcp", "serve"]
    assert skills(cli, "--check", "--surface", "codex-app", "--target", str(target)).exit_code == 0
    config.write_text(
        config.read_text() + "model = 'o3'\n"
    )  # a later edit: uninstall must take out only ours
    assert skills(cli, "--uninstall", "--surface", "codex-app", "--target", str(target)).exit_code == 0
    assert tomllib.loads(config.read_text()) == {"mcp_servers": {"other": {"command": "x"}}, "model": "o3"}


def test_users_own_loopx_entry_is_a_conflict_not_replaced(cli: Cli, tmp_path: Path) -> None:
    """Item 5: a user's own `mcpServers.loopx` in .mcp.json is a conflict; --force backs it up; uninstall gives it back."""
    target = tmp_path / "proj"
    target.mkdir()
    mine = '{"mcpServers": {"loopx": {"command": "/opt/my-loopx", "args": ["serve"]}}}\n'
    (target / ".mcp.json").write_text(mine)
    before = tree(target)
    kept = skills(cli, "--install", "--surface", "claude-code", "--target", str(target), "-f", "json")
    assert kept.exit_code == 5 and tree(target) == before  # nothing else written either
    (conflict,) = [f for f in kept.json()["files"] if f["status"] == "conflict"]
    assert conflict["path"] == ".mcp.json" and "mcpServers.loopx" in conflict["detail"]
    forced = skills(
        cli, "--install", "--surface", "claude-code", "--target", str(target), "--force", "-f", "json"
    )
    assert forced.exit_code == 0 and (target / forced.json()["backups"][0]).read_text() == mine
    assert skills(cli, "--uninstall", "--surface", "claude-code", "--target", str(target)).exit_code == 0
    left = {p: data for p, data in tree(target).items() if not p.startswith(".loopx")}
    assert left == before  # the backup stays under .loopx/backups: it is the user's


@pytest.mark.parametrize(
    ("surface", "rel", "content", "says"),
    [
        ("claude-code", ".mcp.json", '{"mcpServers": []}', "mcpServers is an array"),
        ("claude-code", ".claude/settings.json", '{"hooks": {"Stop": {}}}', "hooks.Stop is a table/object"),
        ("claude-code", ".claude/settings.json", '{"hooks": 3}', "hooks is a number"),
        ("claude-code", ".mcp.json", "[1, 2]", "not a JSON object"),
        ("claude-code", ".mcp.json", '"text"', "not a JSON object"),
        ("claude-code", ".mcp.json", '{"a": NaN}', "not valid JSON"),
        ("claude-code", ".mcp.json", '{"a": 1, "a": 2}', "duplicate key"),
        ("claude-code", ".mcp.json", "[" * 100_000, "not valid JSON"),
        ("codex-app", ".codex/config.toml", "mcp_servers = 5", "mcp_servers is a number"),
        ("codex-app", ".codex/config.toml", "[[mcp_servers]]\nx = 1\n", "mcp_servers is an array"),
        ("codex-app", ".codex/config.toml", "mcp_servers = { loopx = 1 }", "already there"),
        ("codex-app", ".codex/config.toml", "[broken", "not valid TOML"),
        ("codex-app", ".codex/config.toml", "a = " + "[" * 50_000, "not valid TOML"),
    ],
)
def test_unexpected_shapes_are_one_conflict_line(
    cli: Cli, tmp_path: Path, surface: str, rel: str, content: str, says: str
) -> None:
    """Item 5: valid (or invalid) files of an unexpected shape give one conflict line, never a traceback."""
    target = tmp_path / "proj"
    (target / rel).parent.mkdir(parents=True, exist_ok=True)
    (target / rel).write_text(content)
    before = tree(target)
    result = skills(cli, "--install", "--surface", surface, "--target", str(target), "-f", "markdown")
    assert result.exit_code == 5, result.stdout + result.stderr
    lines = [line for line in result.stdout.splitlines() if "conflict " in line]
    assert len(lines) == 1 and rel in lines[0] and says in lines[0], result.stdout
    assert tree(target) == before


def test_a_non_utf8_or_folder_shared_file_is_a_conflict(cli: Cli, tmp_path: Path) -> None:
    """A shared file that is not text, or is a folder, answers like a corrupt file: a conflict, nothing written."""
    target = tmp_path / "proj"
    target.mkdir()
    (target / ".mcp.json").write_bytes(b"\xff\xfe{}")
    (target / ".claude/settings.json").mkdir(parents=True)
    before = tree(target)
    result = skills(cli, "--install", "--surface", "claude-code", "--target", str(target))
    assert (
        result.exit_code == 5 and "not UTF-8 text" in result.stdout and "not a regular file" in result.stdout
    )
    assert tree(target) == before


@pytest.mark.parametrize("manifest", ["[]", '"x"', "1", "{", '{"schema_version": 2, "files": {}}', "null"])
def test_a_manifest_of_the_wrong_shape_is_one_error_line(cli: Cli, tmp_path: Path, manifest: str) -> None:
    """Item 5: a manifest that is `[]` (or any other wrong shape) is one error line, exit 4, unchanged."""
    target = tmp_path / "proj"
    (target / ".loopx").mkdir(parents=True)
    (target / ".loopx/facades.json").write_text(manifest)
    before = tree(target)
    result = skills(cli, "--install", "--surface", "codex-app", "--target", str(target))
    assert result.exit_code == 4 and result.stderr.count("\n") == 1 and "manifest" in result.stderr
    assert tree(target) == before


def test_a_manifest_that_is_a_folder_answers_like_a_corrupt_one(cli: Cli, tmp_path: Path) -> None:
    target = tmp_path / "proj"
    (target / ".loopx/facades.json").mkdir(parents=True)
    result = skills(cli, "--install", "--surface", "dsh", "--target", str(target))
    assert result.exit_code == 4 and "not a regular file" in result.stderr


def test_one_conflicting_file_writes_nothing(cli: Cli, tmp_path: Path) -> None:
    """Item 5: one conflicting shared file used to let the others be written: now all or nothing."""
    target = tmp_path / "proj"
    (target / ".claude").mkdir(parents=True)
    (target / ".claude/settings.json").write_text('{"hooks": {"Stop": "mine"}}')
    before = tree(target)
    result = skills(cli, "--install", "--surface", "claude-code", "--target", str(target), "-f", "json")
    assert result.exit_code == 5 and not result.json()["written"] and tree(target) == before
    assert any("Nothing written" in n for n in result.json()["notices"])
    forced = skills(cli, "--install", "--surface", "claude-code", "--target", str(target), "--force")
    assert forced.exit_code == 5 and (target / ".mcp.json").is_file()  # --force writes the rest
    assert (target / ".claude/settings.json").read_text() == '{"hooks": {"Stop": "mine"}}'


# -- generated inputs ----------------------------------------------------------------------
KEYS = st.sampled_from(
    ["mcpServers", "mcp_servers", "loopx", "hooks", "Stop", "SessionStart", "tools", "x", "Ü"]
)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False)
    | st.text(max_size=8)
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(KEYS | st.text(max_size=4), c, max_size=3),
    max_leaves=12,
)
TOML_SCALARS = st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats() | st.text(max_size=8)
TOML_VALUES = st.recursive(
    TOML_SCALARS, lambda c: st.lists(c, max_size=3) | st.dictionaries(KEYS, c, max_size=3), max_leaves=10
)


def _toml_text(doc: dict[str, Any], inline: bool) -> str:
    try:
        if inline:
            return "".join(f"{k} = {tomlkit.item(v).as_string()}\n" for k, v in doc.items())
        return tomlkit.dumps(doc)
    except Exception:  # tomlkit cannot write every value (e.g. nested arrays of tables): a plain fallback
        return 'mcp_servers = { other = { command = "x" } }\n'


@st.composite
def json_texts(draw: st.DrawFn) -> str:
    """A JSON file a user might have: near our keys, or anything at all."""
    shape = draw(st.sampled_from(["any", "mcp", "mcp-loopx", "hooks", "stop"]))
    value = draw(JSON_VALUES)
    doc = {
        "any": value,
        "mcp": {"mcpServers": value},
        "mcp-loopx": {"mcpServers": {"loopx": value, "other": {"command": "o"}}},
        "hooks": {"hooks": value},
        "stop": {"hooks": {"Stop": value, "SessionStart": [value]}},
    }[shape]
    return json.dumps(doc, indent=draw(st.sampled_from([None, 2, 4])))


@st.composite
def toml_texts(draw: st.DrawFn) -> str:
    """A config.toml a user might have: inline tables, dotted keys, odd types at `mcp_servers`."""
    value = draw(TOML_VALUES)
    doc = draw(st.sampled_from([{"mcp_servers": value}, {"mcp_servers": {"other": value}}, {"model": value}]))
    return _toml_text(doc, draw(st.booleans()))


@settings(max_examples=300, deadline=None)
@given(current=json_texts(), fragment=st.sampled_from([MCP_FRAGMENT, HOOK_FRAGMENT]))
def test_json_merges_reparse_and_keep_foreign_keys(current: str, fragment: merge.Fragment) -> None:
    """Any JSON file: merge then unmerge either conflicts or gives strict JSON with every foreign key kept."""
    try:
        merged = merge.rewrite("json", current, None, fragment, "f.json", "h")
    except ConflictError:
        return
    data = merge.strict_json(merged or "", "f.json")
    assert merge.has("json", merged or "", fragment, "h")
    made = merge.missing("json", current, fragment, "f.json")
    back = merge.rewrite(
        "json", merged, merge.Fragment(fragment.text, fragment.keys, made), None, "f.json", "h"
    )
    before = json.loads(current)
    after = json.loads(back) if back else {}
    if not merge.foreign_owned("json", current, fragment, "f.json", "h"):
        assert merge._same(after, before) or (before == {} and after == {}), (before, after)
    assert isinstance(data, dict)


@settings(max_examples=200, deadline=None)
@given(current=toml_texts())
def test_toml_merges_reparse_and_keep_foreign_keys(current: str) -> None:
    """Any TOML file: a merge conflicts or gives a file tomllib reads, with every foreign key kept."""
    try:
        before = tomllib.loads(current)
    except tomllib.TOMLDecodeError:
        return
    try:
        merged = merge.rewrite("toml", current, None, TOML_FRAGMENT, "c.toml", "h")
    except ConflictError:
        return
    data = tomllib.loads(merged or "")
    assert data["mcp_servers"]["loopx"]["command"] == "loopx"
    rest = {k: v for k, v in data.items() if k != "mcp_servers"}
    assert merge._same(rest, {k: v for k, v in before.items() if k != "mcp_servers"})
    for name, server in before.get("mcp_servers", {}).items():
        assert name == "loopx" or merge._same(data["mcp_servers"][name], server)
    if merge.foreign_owned("toml", current, TOML_FRAGMENT, "c.toml", "h"):
        return  # a user's own [mcp_servers.loopx]: the installer makes this a conflict
    made = merge.missing("toml", current, TOML_FRAGMENT, "c.toml")
    back = merge.rewrite(
        "toml", merged, merge.Fragment(TOML_FRAGMENT.text, TOML_FRAGMENT.keys, made), None, "c.toml", "h"
    )
    assert merge._same(tomllib.loads(back or ""), before)


SHARED = {
    ".mcp.json": json_texts(),
    ".claude/settings.json": json_texts(),
    ".codex/config.toml": toml_texts(),
    "AGENTS.md": st.text(max_size=40),
}
OWNED = [
    ".claude/skills/loopx/SKILL.md",
    ".agents/skills/loopx/SKILL.md",
    ".dsh/plugins/loopx-dsh/package.json",
]


@st.composite
def manifests(draw: st.DrawFn) -> str:
    """A manifest: none, garbage, or a schema-2 one naming paths, some of them hostile."""
    kind = draw(st.sampled_from(["none", "none", "garbage", "shaped"]))
    if kind == "none":
        return ""
    if kind == "garbage":
        return json.dumps(draw(JSON_VALUES))
    path = draw(st.sampled_from([*OWNED, "../outside/precious.md", "/etc/hostname", "link/x", ".mcp.json"]))
    record = {
        "base": draw(st.sampled_from(["target", "codex_home", "home"])),
        "path": path,
        "owners": {
            draw(st.sampled_from(["claude-code", "codex-app", "dsh"])): {"merge": "owned", "sha256": None}
        },
        "written_sha256": draw(st.none() | st.just("0" * 64)),
        "created_dirs": draw(st.lists(st.sampled_from([".", ".claude", "..", "/tmp"]), max_size=2)),
    }
    return json.dumps({"schema_version": draw(st.sampled_from([2, 2, 1, 3])), "files": [record]})


@st.composite
def states(draw: st.DrawFn) -> dict[str, Any]:
    """A pre-existing target: shared files with random content, owned paths as files/folders/links,
    symlinked folders, a file where a folder must be, a manifest."""
    files = {rel: draw(strategy) for rel, strategy in SHARED.items() if draw(st.booleans())}
    odd = {
        rel: draw(st.sampled_from(["file", "folder", "link-out", "link-dir-out"]))
        for rel in OWNED
        if draw(st.booleans())
    }
    links = draw(st.sampled_from([None, ".claude", ".agents", ".codex", "link"]))
    blocker = draw(
        st.sampled_from(
            [None, None, ".loopx", ".claude", ".codex", ".dsh", ".agents/skills", ".loopx/backups"]
        )
    )
    return {"files": files, "odd": odd, "link": links, "manifest": draw(manifests()), "blocker": blocker}


def _build(root: Path, state: dict[str, Any]) -> tuple[Path, Path]:
    target, outside = root / "proj", root / "outside"
    target.mkdir()
    outside.mkdir()
    (outside / "precious.md").write_text("Not LoopX's.\n")
    for rel, text in state["files"].items():
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        (target / rel).write_text(text)
    for rel, how in state["odd"].items():
        path = target / rel
        if path.parent.is_symlink() or any(p.is_symlink() for p in path.parents):
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if how == "file":
            path.write_text("---\nname: mine\n---\n")
        elif how == "folder":
            path.mkdir()
        elif how == "link-out":
            path.symlink_to(outside / "precious.md")
        else:
            path.symlink_to(outside, target_is_directory=True)
    if state["link"] and not (target / state["link"]).exists():
        (target / state["link"]).symlink_to(outside, target_is_directory=True)
    if state["manifest"]:
        (target / ".loopx").mkdir(exist_ok=True)
        (target / ".loopx/facades.json").write_text(state["manifest"])
    blocker = target / (state["blocker"] or "")
    if (
        state["blocker"]
        and not blocker.exists()
        and blocker.parent.is_dir()
        and not blocker.parent.is_symlink()
    ):
        blocker.write_text("a file where LoopX needs a folder\n")
    return target, outside


def _parses(path: Path) -> bool:
    try:
        text = path.read_text()
        if path.suffix == ".toml":
            tomllib.loads(text)
        elif path.suffix == ".json":
            json.loads(text)
        return True
    except (OSError, ValueError, RecursionError):
        return False


@pytest.mark.parametrize("surface", ["claude-code", "codex-app", "dsh"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(state=states())
def test_random_target_states(cli: Cli, surface: str, state: dict[str, Any]) -> None:
    """Install, check and uninstall over any pre-existing state: a documented exit code, no traceback,
    nothing outside the target touched, every shared file that parsed still parses, and install +
    uninstall without a conflict leaves the target byte-identical."""
    root = Path(tempfile.mkdtemp(prefix="loopx-state-", dir=cli.root.parent))
    try:
        target, outside = _build(root, state)
        before, outside_before = tree(target), tree(outside)
        parsed = [rel for rel in SHARED if (target / rel).is_file() and _parses(target / rel)]
        which = ("--surface", surface, "--target", str(target), "--loopx-command", "loopx")
        codes = {}
        for operation in ("--install", "--check", "--uninstall"):
            result = skills(cli, operation, *which)
            codes[operation] = result.exit_code
            assert result.exit_code in DOCUMENTED, (operation, result.exit_code, result.stdout, result.stderr)
            assert str(root) not in result.stdout + result.stderr
            assert tree(outside) == outside_before
            assert all(_parses(target / rel) for rel in parsed if (target / rel).is_file())
        if codes["--install"] == 0 and codes["--uninstall"] == 0 and not state["manifest"]:
            assert tree(target) == before
    finally:
        os.chdir(Path.home())
        shutil.rmtree(root, ignore_errors=True)
