"""DSH (DeepSeek Harness): the `loopx-dsh` native plugin package and the loopx skill.

The package (the `/loopx` command and a turn-boundary listener) goes to `.dsh/plugins/loopx-dsh/`
in the project or `$DSH_HOME/plugins/loopx-dsh/`; the skill to `.agents/skills/loopx/` or
`$DSH_AGENTS_HOME/skills/loopx/`. DSH loads the package once it is linked into a profile.
DSH has no timer: the listener is the loop's scheduler (its cadence is the session's turns), so
it acks the packets it follows and reports what kept it from driving the loop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loopx_core.hosts import (
    Base,
    FacadeFile,
    Host,
    HostListing,
    HostSteps,
    PackageFolder,
    RenderContext,
    hookimpl,
)

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

PACKAGE = "loopx-dsh"
FILES = ("package.json", "cordis.patch.yml", "lib/loopx.js", "lib/command.js", "lib/turn-boundary.js")
"""The package: its manifest, the cordis rows, the helper and the two cordis modules it loads."""
UNLINK = ("dsh", "plugin", "--profile", "web", "remove", PACKAGE)
_SEMVER = r"^(\d+)\.(\d+)\.(\d+)(.*)$"
"""A version's release and the rest; compiled on first use (re's cache), not by every hook's registry."""


def npm_version(version: str) -> str:
    """`version` as semver for package.json (`0.1.0.dev3+g1a` -> `0.1.0-dev3+g1a`); "0.0.0" when it has none."""
    import re  # only a render writes package.json: a tick's --surface hints never do

    match = re.match(_SEMVER, version)
    if not match:
        return "0.0.0"
    pre, _, local = match.group(4).partition("+")
    pre, local = (re.sub(r"[^0-9A-Za-z]+", ".", part).strip(".") for part in (pre, local))
    return ".".join(match.group(1, 2, 3)) + (f"-{pre}" if pre else "") + (f"+{local}" if local else "")


class Dsh(Host):
    """The dsh host."""

    name = "dsh"
    title = "DSH (DeepSeek Harness)"
    templates = PackageFolder("loopx_templates", "dsh")
    bases = (
        Base("dsh_home", env=("DSH_HOME",), default=".dsh", project=".dsh"),
        Base("dsh_agents_home", env=("DSH_AGENTS_HOME", "DSH_HOME"), default=".dsh", project=".agents"),
    )

    def render(self, context: RenderContext) -> list[FacadeFile]:
        """The skill, then the package's files."""
        skill = self.template("shared/agents-skill/SKILL.md.j2", context)
        version = npm_version(context.loopx_version)
        return [
            FacadeFile("skills/loopx/SKILL.md", skill, "dsh_agents_home", shared=True),
            *(
                FacadeFile(
                    f"plugins/{PACKAGE}/{f}", self.template(f"{f}.j2", context, version=version), "dsh_home"
                )
                for f in FILES
            ),
        ]

    def hints(self, packet: dict[str, Any]) -> dict[str, Any] | None:
        """The ack the turn-boundary listener runs for a packet it follows, and the failure report."""
        from loopx_core.hosts import scheduler_hints  # should-run --surface only: never a hook

        return scheduler_hints(packet)

    def steps(self, operation: str, context: RenderContext) -> HostSteps:
        """Install: how to link the package into DSH. Uninstall: unlink it (else `--dump-config` fails)."""
        if operation == "uninstall":
            return HostSteps(
                notes=("Restart DSH: the loopx-dsh package and the LoopX skill are gone.",),
                unregister=(UNLINK,),
            )
        if context.scope == "project":
            where = f'From this folder, load the plugin into DSH, then restart it: `dsh plugin --profile web add -w "link:$PWD/.dsh/plugins/{PACKAGE}"`.'
            return HostSteps(notes=(where,))
        folder = f"${{DSH_HOME:-$HOME/.dsh}}/plugins/{PACKAGE}"
        return HostSteps(
            notes=(
                f'Load the plugin into DSH, then restart it: `dsh plugin --profile web add -w "link:{folder}"`.',
            )
        )

    def listing(self, scope: str, layout: str) -> HostListing | None:
        """`dsh --dump-config` prints the loader rows of every linked package, ours under `# == loopx-dsh`."""
        folder = f".dsh/plugins/{PACKAGE}" if scope == "project" else f"$DSH_HOME/plugins/{PACKAGE}"
        return HostListing(
            ("dsh", "--profile", "web", "--dump-config"),
            f"# == {PACKAGE}",
            f'dsh plugin --profile web add -w "link:{folder}"',
        )


@hookimpl
def loopx_register_hosts(register: Callable[[Host], None]) -> None:
    """Register DSH."""
    register(Dsh())
