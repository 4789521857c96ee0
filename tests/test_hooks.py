"""The hook spec is documented and tested; the built-in hosts are objects the core dispatches to by name.

Also: pluggy is used as designed (entry points and their distributions come from pluggy, no
hook implementation is called directly), no plugin compares a host name, selection works, and
should-run asking a host for hints loads no template engine.
"""

from __future__ import annotations

import ast
import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from loopx_core.hosts import Host, RenderContext, hookspecs
from loopx_core.hosts.manager import get_plugin_manager, hosts, packet_hints, registry
from loopx_installer.merge import merge_markdown
from tests.conftest import REPO, T0_ISO, run_loopx

HOOKS = sorted(
    name for name, fn in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("loopx_")
)
BUILT_IN = ["claude-code", "codex-app", "dsh"]


def test_every_hook_is_a_registration_broadcast() -> None:
    """A hook is kept only where every plugin must be asked: each registers objects through `register`."""
    assert "loopx_register_hosts" in HOOKS
    for name in HOOKS:
        params = list(inspect.signature(getattr(hookspecs, name)).parameters)
        assert name.startswith("loopx_register_") and params == ["register"], name


@pytest.mark.parametrize("hook", HOOKS)
def test_every_hook_is_documented(hook: str) -> None:
    docs = (REPO / "docs/hooks.md").read_text()
    assert f"## `{hook}`" in docs, f"document {hook} in docs/hooks.md"


@pytest.mark.parametrize("hook", HOOKS)
def test_every_hook_has_a_test_of_its_own(hook: str) -> None:
    source = "\n".join(p.read_text() for p in (REPO / "tests").glob("test_*.py"))
    assert re.search(rf"def test_hook_{hook}\b", source), f"write test_hook_{hook}"


@pytest.mark.parametrize(
    "method", ["render", "verify", "hints", "heartbeat_prompt", "handle_hook_event", "steps"]
)
def test_every_host_method_is_documented(method: str) -> None:
    assert f"### `Host.{method}" in (REPO / "docs/hooks.md").read_text()


def test_hook_loopx_register_hosts() -> None:
    pm = get_plugin_manager()
    found = registry(pm)
    assert list(found) == BUILT_IN
    for name, entry in found.items():
        assert isinstance(entry.host, Host) and entry.host.name == name and entry.host.title
        assert entry.plugin == name and entry.distribution == "loopx-kit" and entry.version
        assert entry.host.templates is not None and entry.host.templates.is_dir()
    assert [b.name for h in hosts(pm).values() for b in h.bases] == [
        "claude_config",
        "claude_json",
        "codex_home",
        "dsh_home",
        "dsh_agents_home",
    ]


def test_a_host_declared_twice_is_one_line() -> None:
    from loopx_claude_code import plugin

    pm = get_plugin_manager(
        plugins=[("again", type("Again", (), {"loopx_register_hosts": plugin.loopx_register_hosts}))]
    )
    from loopx_core.errors import UsageError

    with pytest.raises(UsageError, match="'claude-code' is declared twice"):
        hosts(pm)


def test_every_declared_case_renders() -> None:
    for name, h in hosts(get_plugin_manager()).items():
        assert h.cases and set(h.scopes) <= {"project", "user"}
        for scope, layout in h.cases:
            files = h.render(RenderContext(host=name, scope=scope, layout=layout, goal_id="g", agent_id="a"))
            assert files and len({f.key for f in files}) == len(files), (name, scope, layout)


def test_host_steps() -> None:
    """Each built-in host has notes of its own per operation; only DSH and Claude's plugin layout unregister."""
    unregisters = {}
    for name, h in hosts(get_plugin_manager()).items():
        for scope, layout in h.cases:
            context = RenderContext(host=name, scope=scope, layout=layout, goal_id="g", agent_id="a")
            install, gone = h.steps("install", context), h.steps("uninstall", context)
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
    codex = hosts(get_plugin_manager())["codex-app"].steps("install", RenderContext(host="codex-app"))
    assert '[projects."<dir>"] trust_level = "trusted" in $CODEX_HOME/config.toml' in codex.notes[0]


def test_packet_hints_come_from_the_hosts_that_ack() -> None:
    """Codex's automation and DSH's listener ack what they follow; Claude's Stop hook has no scheduler."""
    pm = get_plugin_manager()
    packet = {
        "goal_id": "g",
        "agent_id": "a",
        "scheduler_hint": {"action": "keep", "recommended_rrule": "FREQ=MINUTELY;INTERVAL=10"},
    }
    for name in BUILT_IN:
        copy = json.loads(json.dumps(packet))
        packet_hints(pm, name, copy)
        assert set(copy["scheduler_hint"]) - set(packet["scheduler_hint"]) == (
            {name.replace("-", "_")} if name in ("codex-app", "dsh") else set()
        )
    for name in ("codex-app", "dsh"):
        packet_hints(pm, name, packet)
        hint = packet["scheduler_hint"][name.replace("-", "_")]
        assert hint["ack_hint"]["cli_args"][:2] == ["quota", "scheduler-ack"]
        assert hint["failure_hint"]["cli_args"][:2] == ["quota", "scheduler-fail"]
    untouched = {"goal_id": "g", "agent_id": "a", "scheduler_hint": {}}
    packet_hints(pm, "nobody", untouched)
    assert untouched["scheduler_hint"] == {}


def test_verify_reads_a_fresh_rendering_as_sound() -> None:
    for name, h in hosts(get_plugin_manager()).items():
        context = RenderContext(host=name)
        files = h.render(context)
        installed = {
            f.key: merge_markdown(None, f.content, name) if f.merge == "markdown" else f.content
            for f in files
        }
        assert h.verify(context, installed) == [], name
        assert {finding.problem for finding in h.verify(context, {})} == {"missing"}, name


@pytest.mark.parametrize(
    ("selection", "expected"),
    [
        ("", BUILT_IN),
        ("dsh", ["dsh"]),
        ("-dsh", ["claude-code", "codex-app"]),
        ("claude-code,codex-app", ["claude-code", "codex-app"]),
        ("nobody", []),
    ],
)
def test_environment_selects_plugins(
    monkeypatch: pytest.MonkeyPatch, selection: str, expected: list[str]
) -> None:
    monkeypatch.setenv("LOOPX_PLUGINS", selection)
    assert list(hosts(get_plugin_manager())) == expected


def test_the_built_in_table_is_the_distributions_entry_points() -> None:
    """`BUILTIN` names what LoopX's distribution declares in the `loopx` group (so a built-in host
    loads without reading metadata), and `BUILTIN_EVENTS` every event a built-in host answers."""
    from importlib.metadata import entry_points

    from loopx_core.hosts.manager import BUILTIN, BUILTIN_EVENTS, events

    declared = {ep.name: ep.value for ep in entry_points(group="loopx") if ep.dist.name == "loopx-kit"}
    assert declared == BUILTIN
    pm = get_plugin_manager()
    assert {pm.get_name(plugin) for plugin in pm.get_plugins()} == set(BUILT_IN)
    assert {name: host.name for name, host in events(pm).items()} == BUILTIN_EVENTS
    assert not [name for name in vars(pm) if name.startswith("loopx")]  # nothing invented on the manager


@pytest.mark.parametrize(("surface", "event"), [("codex-app", None), ("dsh", None), (None, "claude-stop")])
def test_a_built_in_host_loads_its_plugin_alone(surface: str | None, event: str | None) -> None:
    pm = get_plugin_manager(surface=surface, event=event)
    assert [pm.get_name(p) for p in pm.get_plugins()] == [surface or "claude-code"]


def test_the_core_never_calls_a_hook_implementation_directly() -> None:
    for folder in ("loopx_core", "installer"):
        for path in (REPO / folder).rglob("*.py"):
            text = path.read_text()
            for banned in ("get_hookimpls", ".function(", "loopx_origins", "importlib.metadata.entry_points"):
                assert banned not in text, f"{path.relative_to(REPO)} uses {banned}"


def test_the_installer_is_handed_the_plugin_manager() -> None:
    """One manager per command: the installer never builds its own, so nothing needs to patch it."""
    from loopx_installer import service

    assert list(inspect.signature(service.run).parameters) == ["request", "pm"]
    for path in (REPO / "installer").rglob("*.py"):
        assert "get_plugin_manager" not in path.read_text(), path.name
    sandbox = (REPO / "loopx_core/conformance/sandbox.py").read_text()
    assert (
        "setattr(service" not in sandbox
        and "service.run(self.request(operation, case, dry_run=dry_run), self.pm)" in sandbox
    )


def _compares_a_host_name(tree: ast.AST, names: set[str]) -> list[int]:
    """Lines of comparisons (==, !=, in) with a host name, or with a variable called host or surface."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        for side in [node.left, *node.comparators]:
            values = side.elts if isinstance(side, ast.Tuple | ast.List | ast.Set) else [side]
            for value in values:
                literal = isinstance(value, ast.Constant) and value.value in names
                named = isinstance(value, ast.Name | ast.Attribute) and (
                    getattr(value, "id", None) in ("host", "surface")
                    or getattr(value, "attr", None) == "name"
                )
                if literal or named:
                    found.append(node.lineno)
    return found


def test_no_plugin_compares_a_host_name() -> None:
    from loopx_core.hosts import scaffold

    names = {*BUILT_IN, "acme-ide"}
    sources = {str(path.relative_to(REPO)): path.read_text() for path in (REPO / "plugins").rglob("*.py")}
    assert len(sources) >= 6
    generated = scaffold.render(scaffold.names("acme-ide"))
    sources.update({f"scaffold: {name}": text for name, text in generated.items() if name.endswith(".py")})
    offenders = {
        name: lines
        for name, text in sources.items()
        if (lines := _compares_a_host_name(ast.parse(text), names))
    }
    assert offenders == {}
    assert _compares_a_host_name(
        ast.parse("x = 1 if host == SURFACE.name else None"), names
    )  # the check bites
    assert _compares_a_host_name(ast.parse("ok = context.host != 'dsh'"), names)


def test_hosts_list_cli(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("hosts", "list", "-f", "json")
    rows = result.json()["hosts"]
    assert [r["name"] for r in rows] == BUILT_IN
    assert all(
        r["distribution"] == "loopx-kit" and r["source"].startswith("entry point loopx_") for r in rows
    )
    assert rows[0]["cases"] == ["project/default", "project/plugin", "user/default"]
    table = cli("hosts", "list", "-f", "markdown").stdout
    assert "| codex-app | Codex App |" in table


def test_should_run_with_a_surface_loads_no_template_engine(tmp_path: Path) -> None:
    for args in (
        ["init"],
        ["goal", "add", "-g", "demo", "-o", "Ship"],
        ["agent", "register", "-a", "builder"],
    ):
        assert run_loopx(*args, root=tmp_path).exit_code == 0
    code = (
        "import sys, json\n"
        "from loopx_core.cli.entry import main\n"
        "try:\n"
        f"    main(['--root', {str(tmp_path)!r}, 'quota', 'should-run', '-g', 'demo', '-a', 'builder', '--surface', 'codex-app'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & {'jinja2', 'tomlkit', 'typer', 'mcp'})), file=sys.stderr)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"LOOPX_NOW": T0_ISO, "PATH": ""},
        check=True,
    )
    assert json.loads(proc.stderr.strip().splitlines()[-1]) == []
    assert "codex_app" in json.loads(proc.stdout)["scheduler_hint"]


def _code_strings(tree: ast.AST) -> list[str]:
    """String constants of a module that are not documentation (bare string statements)."""
    docs = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    }
    return [
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs
    ]


def test_the_core_declares_no_host_folder() -> None:
    """The hosts' folders and their variables are declared by the plugins, not by the core or the installer."""
    declared = {b.name for h in hosts(get_plugin_manager()).values() for b in h.bases}
    variables = {v for h in hosts(get_plugin_manager()).values() for b in h.bases for v in b.env}
    assert {"codex_home", "CODEX_HOME", "CLAUDE_CONFIG_DIR"} <= declared | variables
    folders = [REPO / "loopx_core/hosts", REPO / "loopx_core/conformance", REPO / "installer"]
    for path in [p for folder in folders for p in folder.rglob("*.py")]:
        found = [
            s for s in _code_strings(ast.parse(path.read_text())) if any(n in s for n in declared | variables)
        ]
        assert found == [], path.relative_to(REPO)
