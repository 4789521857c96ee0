"""`HostConformance`: subclass it, name your host, and every conformance check is a test.

    from loopx_core.pytest_plugin import HostConformance

    class TestMyHost(HostConformance):
        host = "my-host"

The fixtures come from `loopx_core.pytest_plugin` (activate it in conftest.py with
`pytest_plugins = ["loopx_core.pytest_plugin"]`).
"""

from __future__ import annotations

from typing import ClassVar

from loopx_core.conformance import checks
from loopx_core.conformance.sandbox import Case, Sandbox


class HostConformance:
    """The conformance suite for one host; each check is a test of its own."""

    host: ClassVar[str] = ""
    """The host (surface) name to check."""
    known_issues: ClassVar[dict[str, str]] = {}
    """Test name -> why it fails for now (a bug outside the plugin): run as a strict xfail, so the
    suite says so once it is fixed."""

    def test_surface_is_declared(self, loopx_sandbox: Sandbox) -> None:
        """The host is declared with a kebab-case name, its cases, base folders and template folder."""
        __tracebackhide__ = True
        checks.check_surface(loopx_sandbox)

    def test_renders_without_undefined_variables(
        self, loopx_sandbox: Sandbox, loopx_cases: list[Case]
    ) -> None:
        """Every case renders, with and without ids, and no template uses an undefined variable."""
        __tracebackhide__ = True
        checks.check_renders_strictly(loopx_sandbox, loopx_cases)

    def test_paths_stay_inside_the_target(self, loopx_sandbox: Sandbox, loopx_cases: list[Case]) -> None:
        """Every file path is relative, under a known base, inside the target, and unique."""
        __tracebackhide__ = True
        checks.check_paths_inside(loopx_sandbox, loopx_cases)

    def test_files_carry_a_provenance_marker(self, loopx_sandbox: Sandbox, loopx_cases: list[Case]) -> None:
        """Owned files in formats with comments say that LoopX generated them."""
        __tracebackhide__ = True
        checks.check_provenance(loopx_sandbox, loopx_cases)

    def test_owned_files_parse(self, loopx_sandbox: Sandbox, loopx_cases: list[Case]) -> None:
        """Every JSON, TOML and YAML file (and merged fragment) parses with a strict parser."""
        __tracebackhide__ = True
        checks.check_owned_files_parse(loopx_sandbox, loopx_cases)

    def test_uninstall_restores_an_empty_target(
        self, loopx_sandbox: Sandbox, loopx_cases: list[Case]
    ) -> None:
        """Install then uninstall into an empty target leaves it byte-identical."""
        __tracebackhide__ = True
        checks.check_round_trip(loopx_sandbox, loopx_cases, foreign=False)

    def test_uninstall_restores_foreign_content(
        self, loopx_sandbox: Sandbox, loopx_cases: list[Case]
    ) -> None:
        """Install then uninstall where the user's own content fills the shared files: byte-identical."""
        __tracebackhide__ = True
        checks.check_round_trip(loopx_sandbox, loopx_cases, foreign=True)

    def test_uninstall_keeps_user_edits(self, loopx_sandbox: Sandbox, loopx_cases: list[Case]) -> None:
        """The user edits a shared file after install: uninstall takes out only LoopX's part."""
        __tracebackhide__ = True
        checks.check_uninstall_keeps_user_edits(loopx_sandbox, loopx_cases)

    def test_reinstall_is_a_no_op(self, loopx_sandbox: Sandbox, loopx_cases: list[Case]) -> None:
        """Installing again a day later plans only `unchanged` and writes nothing."""
        __tracebackhide__ = True
        checks.check_reinstall_is_a_no_op(loopx_sandbox, loopx_cases)

    def test_check_is_clean_after_install(self, loopx_sandbox: Sandbox, loopx_cases: list[Case]) -> None:
        """`--check` finds no drift in a fresh installation (the plugin's verify hook included)."""
        __tracebackhide__ = True
        checks.check_clean_after_install(loopx_sandbox, loopx_cases)

    def test_packet_hints_are_well_formed(self, loopx_sandbox: Sandbox) -> None:
        """Hints are None or a small JSON dict whose `cli_args` are loopx commands."""
        __tracebackhide__ = True
        checks.check_packet_hints(loopx_sandbox)
