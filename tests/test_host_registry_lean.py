"""The lean registry of the built-in hosts (hosts/builtin.py) finds what pluggy's registry finds.

Its tables are pyproject.toml's entry points and the registry's hosts and events; its scan of
the `loopx` entry points reads generated site folders as importlib.metadata does; it answers
only when only the built-in plugins are installed; `hookimpl` marks as pluggy's marker does;
the Codex heartbeat prompt written in Python is its template's text; and the host toolkit and
the built-in plugin modules import neither pluggy nor importlib.metadata/resources nor Jinja.
"""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
import tomllib
import types
import zipfile
from pathlib import Path

import pluggy
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import loopx_core.hosts
from loopx_core.hosts import Host, RenderContext, builtin, markers
from loopx_core.hosts.manager import events, get_plugin_manager, hosts, registry
from tests.builders import distribution

REPO = Path(__file__).resolve().parents[1]
PLUGINS: dict[str, str] = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["entry-points"][
    "loopx"
]
"""The built-in entry points, as pyproject.toml declares them (the core's code names none)."""
settings_fs = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture(autouse=True)
def plain_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No plugin selection and the lean path on, whatever the outer environment says."""
    monkeypatch.delenv("LOOPX_PLUGINS", raising=False)
    monkeypatch.delenv("LOOPX_NO_FAST_PATH", raising=False)


def _metadata_entry_points(path: list[str] | None = None) -> list[tuple[str, str]]:
    """The `loopx` entry points importlib.metadata (pluggy's loader) finds on `path` (else sys.path)."""
    dists = (
        importlib.metadata.distributions(path=path)
        if path is not None
        else importlib.metadata.distributions()
    )
    return [(ep.name, ep.value) for dist in dists for ep in dist.entry_points if ep.group == "loopx"]


def test_the_distribution_and_its_plugins_are_pyprojects() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["name"].replace("-", "_").replace(".", "_").lower() == builtin.DISTRIBUTION
    assert sorted(builtin.builtin_entry_points() or []) == sorted(PLUGINS.values())


def test_the_installed_entry_points_are_the_builtin_ones() -> None:
    assert sorted(builtin.entry_points(sys.path) or []) == sorted(_metadata_entry_points())
    assert sorted(_metadata_entry_points()) == sorted(PLUGINS.items())


def test_the_hook_names_are_the_specs() -> None:
    from loopx_core.hosts import hookspecs

    specs = [name for name in vars(hookspecs) if getattr(getattr(hookspecs, name), "loopx_spec", None)]
    assert sorted(specs) == sorted(markers.HOOK_NAMES)


def test_the_events_are_the_registrys() -> None:
    every = builtin.every_host()
    assert every is not None
    lean = {event: h.name for h in every.values() for event in h.events}
    assert lean == {event: h.name for event, h in events(get_plugin_manager()).items()}


def _same(lean: Host, full: Host) -> bool:
    facts = ("name", "title", "bases", "cases", "events", "version")
    return type(lean) is type(full) and all(getattr(lean, f) == getattr(full, f) for f in facts)


def test_lean_hosts_are_the_registrys_hosts() -> None:
    full = hosts(get_plugin_manager())
    every = builtin.every_host()
    assert every is not None and list(every) == list(full)
    assert all(_same(every[name], full[name]) for name in full)
    for name in full:
        found = builtin.named_host(name)
        assert found is not None and _same(found, full[name])
    for event, h in events(get_plugin_manager()).items():
        found = builtin.event_host(event)
        assert found is not None and _same(found, h)


@pytest.mark.parametrize("name", ["nope", "", "claude-code ", "Claude-Code", "loopx_claude_code.plugin"])
def test_a_name_no_builtin_owns_goes_to_pluggy(name: str) -> None:
    assert builtin.event_host(name) is None and builtin.named_host(name) is None


@pytest.mark.parametrize(
    ("value", "lean"),
    [("dsh", False), ("-dsh", False), ("claude-code,codex-app,dsh", False), (" , ", True), ("", True)],
)
def test_a_plugin_selection_goes_to_pluggy(monkeypatch: pytest.MonkeyPatch, value: str, lean: bool) -> None:
    """Any name in LOOPX_PLUGINS (even all of them): pluggy decides; blank is no selection."""
    monkeypatch.setenv("LOOPX_PLUGINS", value)
    assert (builtin.builtin_entry_points() is not None) is lean
    assert (builtin.event_host("claude-stop") is not None) is lean
    assert (builtin.every_host() is not None) is lean


def test_no_fast_path_goes_to_pluggy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOOPX_NO_FAST_PATH", "1")
    assert builtin.named_host("codex-app") is None and builtin.every_host() is None


def test_another_metadata_finder_goes_to_pluggy(monkeypatch: pytest.MonkeyPatch) -> None:
    class Finder:
        def find_spec(self, *args: object) -> None:
            return None

        def find_distributions(self, *args: object) -> list[object]:
            return []

    monkeypatch.setattr(sys, "meta_path", [Finder(), *sys.meta_path])
    assert builtin.builtin_entry_points() is None and builtin.event_host("claude-stop") is None


@pytest.mark.parametrize(
    "entry_points",
    [
        "[loopx]\norbit-ide = orbit_host.plugin\n",  # a third-party host plugin
        "[loopx]\nclaude-code = orbit_host.plugin\n",  # one shadowing a built-in's name
        "[loopx]\nclaude-code = loopx_claude_code.plugin\ncodex-app = loopx_codex_app.plugin\n"
        "dsh = loopx_dsh.plugin\n",  # a second copy of LoopX's own
        "[console_scripts]\nbroken line\n",  # a file importlib.metadata refuses
        b"[loopx]\norbit = \xff\n",  # not UTF-8
    ],
)
def test_another_distribution_goes_to_pluggy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entry_points: str | bytes
) -> None:
    distribution(tmp_path, "orbit_host", entry_points)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert builtin.builtin_entry_points() is None
    assert builtin.event_host("claude-stop") is None and builtin.every_host() is None


def test_an_unrelated_distribution_keeps_the_lean_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    distribution(tmp_path, "tool", "[console_scripts]\ntool = tool:main\n[pytest11]\nx = tool.plugin\n")
    distribution(tmp_path, "bare", None)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert builtin.builtin_entry_points() is not None and builtin.event_host("claude-stop") is not None


def test_a_zip_or_an_egg_on_the_path_goes_to_pluggy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    archive = tmp_path / "plugins.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("orbit-1.0.dist-info/entry_points.txt", "[loopx]\norbit = orbit\n")
    assert builtin.entry_points([str(archive)]) is None
    assert _metadata_entry_points([str(archive)]) == [("orbit", "orbit")]  # what the scan would miss
    egg = tmp_path / "orbit-1.0.egg"
    (egg / "EGG-INFO").mkdir(parents=True)
    assert builtin.entry_points([str(egg)]) is None
    monkeypatch.syspath_prepend(str(archive))
    assert builtin.builtin_entry_points() is None


NAMES = st.sampled_from(["orbit", "claude-code", "x.y", "a b", "", "=", "[loopx]"])
LINES = st.one_of(
    st.sampled_from(["[loopx]", "[ loopx ]", "[[loopx]]", "[loopx", "[LOOPX]", "[console_scripts]", "[]"]),
    st.sampled_from(["", "   ", "# [loopx]", "; comment", "no equals sign", "\t[loopx]\t"]),
    st.builds(
        lambda n, sp, v: f"{n}{sp}={sp}{v}",
        NAMES,
        st.sampled_from(["", " ", "\t"]),
        NAMES | st.just("m:f [x]"),
    ),
)
ENTRY_FILE = st.one_of(
    st.none(),
    st.lists(LINES, max_size=8).map("\n".join),
    st.lists(LINES, max_size=8).map("\r\n".join),
    st.just(b"\xff\xfe[loopx]\n"),
    st.just("\ufeff[loopx]\nx = y\n"),
)


@settings_fs
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "Orbit_Host", "c"]), ENTRY_FILE), max_size=4))
def test_the_scan_reads_entry_points_as_importlib_metadata(
    tmp_path_factory: pytest.TempPathFactory, dists: list[tuple[str, str | bytes | None]]
) -> None:
    """On generated site folders: the scan finds importlib.metadata's `loopx` entry points, or is
    unsure (None) exactly where importlib.metadata fails to read a file."""
    site = tmp_path_factory.mktemp("site")
    for index, (name, text) in enumerate(dists):
        distribution(site, f"{name}{index}", text)
    try:
        expected: list[tuple[str, str]] | None = sorted(_metadata_entry_points([str(site)]))
    except Exception:  # pluggy's loading would fail the same way
        expected = None
    found = builtin.entry_points([str(site)])
    assert (sorted(found) if found is not None else None) == expected


def test_the_scan_is_unsure_of_what_it_cannot_read(tmp_path: Path) -> None:
    (tmp_path / "odd-1.0.dist-info" / "entry_points.txt").mkdir(parents=True)
    assert builtin.entry_points([str(tmp_path)]) is None
    assert builtin.entry_points([str(tmp_path / "missing"), 42]) is None  # not a folder name
    assert builtin.entry_points([str(tmp_path / "missing")]) == []
    plain = tmp_path / "plain"
    (plain / "old.egg-info").mkdir(parents=True)  # no entry_points.txt
    (plain / "file.dist-info").write_text("")  # a file, as importlib.metadata reads it: no entry points
    assert builtin.entry_points([str(plain)]) == _metadata_entry_points([str(plain)]) == []


OPTIONS = ["hookwrapper", "optionalhook", "tryfirst", "trylast", "wrapper"]


@given(
    st.fixed_dictionaries({}, optional={k: st.booleans() for k in OPTIONS}), st.none() | st.text(max_size=8)
)
def test_hookimpl_marks_as_pluggys_marker(options: dict[str, bool], specname: str | None) -> None:
    def ours() -> None: ...

    def theirs() -> None: ...

    markers.hookimpl(**options, specname=specname)(ours)
    pluggy.HookimplMarker("loopx")(**options, specname=specname)(theirs)
    assert getattr(ours, markers.IMPL_ATTRIBUTE) == theirs.loopx_impl


@pytest.mark.parametrize("form", ["bare", "called", "positional"])
def test_hookimpl_forms_mark_as_pluggys(form: str) -> None:
    """`@hookimpl`, `@hookimpl()` and `hookimpl(f, True, ...)` as pluggy's marker takes them."""
    marked = []
    for marker in (markers.hookimpl, pluggy.HookimplMarker("loopx")):

        def function() -> None: ...

        if form == "bare":
            marker(function)
        elif form == "called":
            marker()(function)
        else:
            marker(function, True, False, True)  # type: ignore[call-overload]
        marked.append(function.loopx_impl)
    assert marked[0] == marked[1]


def test_pluggy_registers_a_plugin_marked_without_pluggy() -> None:
    class Orbit(Host):
        name = "orbit-ide"
        title = "Orbit"

    plugin = types.ModuleType("orbit_plugin")

    @markers.hookimpl
    def loopx_register_hosts(register: object) -> None:
        register(Orbit())  # type: ignore[operator]

    plugin.loopx_register_hosts = loopx_register_hosts  # type: ignore[attr-defined]
    pm = get_plugin_manager(load_entrypoints=False, plugins=[("orbit", plugin)])
    assert list(hosts(pm)) == ["orbit-ide"] and registry(pm)["orbit-ide"].plugin == "orbit"


IDS = st.from_regex(r"[a-z][a-z0-9._-]{0,20}", fullmatch=True)
COMMANDS = st.one_of(
    st.just("loopx"), st.text(max_size=30), st.sampled_from(["/opt/my tools/loopx", "it's", "a\nb"])
)


@settings(max_examples=200, deadline=None)
@given(goal=IDS, agent=IDS, loopx=COMMANDS)
def test_every_hosts_prompt_is_its_templates_text(goal: str, agent: str, loopx: str) -> None:
    """A host whose templates hold heartbeat-prompt.md.j2 answers its rendering; the others none."""
    with_template = 0
    for h in hosts(get_plugin_manager()).values():
        context = RenderContext(host=h.name, goal_id=goal, agent_id=agent, loopx_command=loopx)
        if h.templates is not None and (h.templates / "heartbeat-prompt.md.j2").is_file():
            with_template += 1
            assert h.heartbeat_prompt(context) == h.template("heartbeat-prompt.md.j2", context)
        else:
            assert h.heartbeat_prompt(context) is None
    assert with_template == 1  # codex-app


def test_the_toolkit_names_load_on_first_use() -> None:
    assert loopx_core.hosts.__all__ == sorted(loopx_core.hosts.__all__)
    assert set(loopx_core.hosts.__all__) == set(loopx_core.hosts._HOME)
    for name in loopx_core.hosts.__all__:
        assert getattr(loopx_core.hosts, name) is not None
    with pytest.raises(AttributeError):
        _ = loopx_core.hosts.Nope  # type: ignore[attr-defined]


SLOW = ("pluggy", "jinja2", "importlib.metadata", "importlib.resources", "pydantic", "typer", "tomlkit")


@pytest.mark.parametrize("module", ["loopx_core.hosts", *PLUGINS.values(), "loopx_core.hosts.builtin"])
def test_host_modules_import_no_slow_module(module: str) -> None:
    code = f"import sys, json, {module}\nprint(json.dumps(sorted(m for m in {SLOW!r} if m in sys.modules)))\n"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(loaded) == []


@given(
    surface=st.sampled_from(sorted(PLUGINS)),  # each built-in plugin registers the host of its name
    hint=st.fixed_dictionaries(
        {}, optional={"recommended_rrule": st.none() | st.just("FREQ=HOURLY"), "fingerprint": st.just("f1")}
    ),
)
@settings(max_examples=60, deadline=None)
def test_a_lean_hosts_packet_hints_are_the_registrys(surface: str, hint: dict[str, object]) -> None:
    """What `host_hints` could merge without pluggy (rules.merge_hints on the lean host) is what
    manager.packet_hints merges."""
    from loopx_core.hosts.manager import packet_hints
    from loopx_core.hosts.rules import merge_hints

    packets = [{"goal_id": "g", "agent_id": "a", "scheduler_hint": dict(hint)} for _ in range(2)]
    packet_hints(get_plugin_manager(), surface, packets[0])
    lean = builtin.named_host(surface)
    assert lean is not None
    merge_hints(lean, packets[1])
    assert packets[0] == packets[1]


@pytest.mark.parametrize(
    ("entry_points", "expected"),
    [
        ("[loopx]\na = mod_a\nb = pkg.mod_b\n", ["mod_a", "pkg.mod_b"]),
        ("[loopx]\nb = mod_b\na = mod_a\n", ["mod_b", "mod_a"]),  # pluggy's order: the file's
        ("[loopx]\na = mod:attr\n", None),
        ("[loopx]\na = mod [extra]\n", None),
        ("[loopx]\na = mod_a\na = mod_b\n", None),
        ("[console_scripts]\nloopx = x:y\n", []),
    ],
)
def test_the_builtin_entry_points_are_plain_modules_of_loopxs_distribution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entry_points: str, expected: list[str] | None
) -> None:
    distribution(tmp_path, "loopx_kit", entry_points)
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    assert builtin.builtin_entry_points() == expected


def test_two_loopx_distributions_go_to_pluggy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "Loopx.Kit-0.0.1.dist-info").mkdir()  # another version's metadata, no entry points
    monkeypatch.syspath_prepend(str(tmp_path))
    assert builtin.builtin_entry_points() is None and builtin.every_host() is None


def _module(**attributes: object) -> types.ModuleType:
    module = types.ModuleType("plugin")
    for name, value in attributes.items():
        setattr(module, name, value)
    return module


def _marked(**options: object) -> object:
    def loopx_register_hosts(register: object) -> None: ...

    return markers.hookimpl(loopx_register_hosts, **options)  # type: ignore[call-overload]


@pytest.mark.parametrize(
    ("attributes", "taken"),
    [
        ({"loopx_register_hosts": _marked()}, True),
        ({"loopx_register_hosts": _marked(tryfirst=True)}, True),
        ({"loopx_register_hosts": _marked(), "loopx_register_notice_sinks": _marked()}, True),
        ({"loopx_register_hosts": _marked(wrapper=True)}, False),
        ({"loopx_register_hosts": _marked(hookwrapper=True)}, False),
        ({"loopx_register_hosts": _marked(specname="loopx_register_hosts")}, False),
        ({"loopx_register_hosts": _marked(), "loopx_typo": _marked()}, False),
        ({"loopx_register_hosts": lambda register: None}, False),
        ({}, False),
    ],
)
def test_only_a_plain_hook_is_called_without_pluggy(attributes: dict[str, object], taken: bool) -> None:
    """A wrapper, a renamed hook or an implementation of no hook: pluggy treats them its own way."""
    assert (builtin._register_hook(_module(**attributes)) is not None) is taken


TABLE: dict[str, str] = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["entry-points"][
    builtin.EVENTS
]
"""pyproject.toml's events table: each built-in hook event and the plugin module registering it."""
REAL_TABLE = "".join(f"{event} = {module}\n" for event, module in TABLE.items())
OURS = "[loopx]\n" + "".join(f"{name} = {module}\n" for name, module in PLUGINS.items())


@pytest.mark.parametrize(
    ("table", "named"),
    [
        (f"[loopx.events]\n{REAL_TABLE}", TABLE["claude-stop"]),
        ("", None),  # no table (metadata installed before it): every plugin, as before
        ("[loopx.events]\n", None),
        (f"[loopx.events]\n{REAL_TABLE}claude-stop = {TABLE['claude-stop']}\n", None),  # named twice
        ("[loopx.events]\nclaude-stop = os\n", None),  # a module that is no built-in plugin
        ("[loopx.events]\nclaude-stop = loopx_codex_app.plugin\n", "loopx_codex_app.plugin"),  # wrong
    ],
)
def test_a_doubtful_events_table_keeps_the_hosts_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, table: str, named: str | None
) -> None:
    """Whatever the table says, `event_host` answers with the registry's host: a table it is not
    sure of, or one naming a plugin that does not register the event, imports every plugin."""
    expected = events(get_plugin_manager())  # imports every plugin, before sys.path is only the site
    distribution(tmp_path, "loopx_kit", OURS + table)
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    assert builtin.event_plugin("claude-stop") == named
    for event, full in expected.items():
        found = builtin.event_host(event)
        assert found is not None and _same(found, full), event
    assert builtin.event_host("nope") is None


def test_an_events_table_of_another_distribution_goes_to_pluggy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    distribution(tmp_path, "orbit_host", "[loopx.events]\nclaude-stop = orbit_host\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert builtin.event_plugin("claude-stop") is None and builtin.event_host("claude-stop") is None
