"""Every hook spec is documented and tested; the built-in hosts implement them; selection works."""

from __future__ import annotations

import inspect
import re

import pytest

from loopx_core.hosts import hookspecs
from loopx_core.hosts.manager import get_plugin_manager, hosts, packet_hints
from loopx_core.hosts.model import RenderContext
from loopx_installer.merge import merge_markdown
from tests.conftest import REPO

HOOKS = sorted(
    name for name, fn in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("loopx_")
)
BUILT_IN = ["claude-code", "codex-app", "dsh"]


def test_there_are_hooks() -> None:
    assert HOOKS == [
        "loopx_heartbeat_prompt",
        "loopx_host_steps",
        "loopx_packet_hints",
        "loopx_register_hook_handlers",
        "loopx_register_hosts",
        "loopx_render_facade",
        "loopx_verify_installation",
    ]


@pytest.mark.parametrize("hook", HOOKS)
def test_every_hook_is_documented(hook: str) -> None:
    docs = (REPO / "docs/hooks.md").read_text()
    assert f"## `{hook}`" in docs, f"document {hook} in docs/hooks.md"


@pytest.mark.parametrize("hook", HOOKS)
def test_every_hook_has_a_test_of_its_own(hook: str) -> None:
    source = "\n".join(p.read_text() for p in (REPO / "tests").glob("test_*.py"))
    assert re.search(rf"def test_hook_{hook}\b", source), f"write test_hook_{hook}"


def test_hook_loopx_register_hosts() -> None:
    pm = get_plugin_manager()
    found = hosts(pm)
    assert list(found) == BUILT_IN
    for name, surface in found.items():
        assert surface.plugin == name and surface.version and surface.title
        assert surface.template_root.is_dir()


def test_hook_loopx_render_facade() -> None:
    pm = get_plugin_manager()
    for name, surface in hosts(pm).items():
        for scope in surface.scopes:
            for layout in surface.layouts:
                if layout != "default" and scope != "project":
                    continue
                files = pm.hook.loopx_render_facade(
                    host=name,
                    context=RenderContext(host=name, scope=scope, layout=layout, goal_id="g", agent_id="a"),
                )
                assert files, (name, scope, layout)
                assert len({(f.base, f.path) for f in files}) == len(files)
    assert pm.hook.loopx_render_facade(host="nobody", context=RenderContext(host="nobody")) is None


def test_hook_loopx_host_steps() -> None:
    """Each built-in host has notes of its own per operation; only DSH and Claude's plugin layout unregister."""
    pm = get_plugin_manager()
    unregisters = {}
    for name, surface in hosts(pm).items():
        for scope in surface.scopes:
            for layout in surface.layouts:
                if layout != "default" and scope != "project":
                    continue
                context = RenderContext(host=name, scope=scope, layout=layout, goal_id="g", agent_id="a")
                install = pm.hook.loopx_host_steps(host=name, operation="install", context=context)
                gone = pm.hook.loopx_host_steps(host=name, operation="uninstall", context=context)
                assert install.notes and gone.notes and set(install.notes).isdisjoint(gone.notes)
                assert not install.unregister
                assert not any("/tmp" in n or n.count("/home/") for n in install.notes + gone.notes)
                unregisters[(name, scope, layout)] = [" ".join(c) for c in gone.unregister]
    assert unregisters[("dsh", "project", "default")] == ["dsh plugin --profile web remove loopx-dsh"]
    assert unregisters[("claude-code", "project", "plugin")] == [
        "claude plugin uninstall loopx@loopx",
        "claude plugin marketplace remove loopx",
    ]
    assert unregisters[("codex-app", "user", "default")] == []
    codex = pm.hook.loopx_host_steps(
        host="codex-app", operation="install", context=RenderContext(host="codex-app", scope="project")
    )
    assert (
        "$CODEX_HOME/config.toml" in codex.notes[0]
        and '[projects."<dir>"] trust_level = "trusted"' in codex.notes[0]
    )
    assert (
        pm.hook.loopx_host_steps(host="nobody", operation="install", context=RenderContext(host="nobody"))
        is None
    )


def test_hook_loopx_packet_hints() -> None:
    pm = get_plugin_manager()
    packet = {
        "goal_id": "g",
        "agent_id": "a",
        "scheduler_hint": {"action": "keep", "recommended_rrule": "FREQ=MINUTELY;INTERVAL=10"},
    }
    packet_hints(pm, "codex-app", packet)
    hint = packet["scheduler_hint"]["codex_app"]
    assert hint["ack_hint"]["cli_args"][:2] == ["quota", "scheduler-ack"]
    assert hint["failure_hint"]["cli_args"][:2] == ["quota", "scheduler-fail"]
    untouched = {"goal_id": "g", "agent_id": "a", "scheduler_hint": {}}
    packet_hints(pm, "nobody", untouched)
    assert untouched["scheduler_hint"] == {}


def test_hook_loopx_verify_installation() -> None:
    pm = get_plugin_manager()
    for name in BUILT_IN:
        context = RenderContext(host=name)
        files = pm.hook.loopx_render_facade(host=name, context=context)
        installed = {
            f"{f.base}/{f.path}": merge_markdown(None, f.content, name)
            if f.merge == "markdown"
            else f.content
            for f in files
        }
        assert pm.hook.loopx_verify_installation(host=name, context=context, files=installed) == [], name
        assert pm.hook.loopx_verify_installation(host=name, context=context, files={}), name
    assert (
        pm.hook.loopx_verify_installation(host="nobody", context=RenderContext(host="nobody"), files={})
        is None
    )


@pytest.mark.parametrize(
    ("selection", "expected"),
    [
        ("", BUILT_IN),
        ("dsh", ["dsh"]),
        ("-dsh", ["claude-code", "codex-app"]),
        ("claude-code,codex-app", ["claude-code", "codex-app"]),
    ],
)
def test_environment_selects_plugins(
    monkeypatch: pytest.MonkeyPatch, selection: str, expected: list[str]
) -> None:
    monkeypatch.setenv("LOOPX_PLUGINS", selection)
    assert list(hosts(get_plugin_manager())) == expected


def test_hosts_list_cli(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("hosts", "list", "-f", "json")
    rows = result.json()["hosts"]
    assert [r["name"] for r in rows] == BUILT_IN
    assert all(
        r["distribution"] == "loopx-kit" and r["source"].startswith("entry point loopx_") for r in rows
    )
    table = cli("hosts", "list").stdout
    assert "| codex-app | Codex App |" in table
