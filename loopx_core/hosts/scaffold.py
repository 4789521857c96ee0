"""`loopx hosts scaffold NAME`: write a new host plugin distribution from Jinja templates.

The templates live in `loopx_templates/scaffold/`. Every file there is a template whose
output path drops the final `.j2` and replaces `__module__` with the plugin's module name.
They use `<< ... >>` and `<% ... %>` as delimiters, so the generated plugin's own Jinja
templates (`{{ ... }}`) and Python's `Callable[[...], ...]` pass through untouched.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import unicodedata
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

import jinja2

from loopx_core import __version__
from loopx_core.errors import RefusedError, UsageError
from loopx_core.hosts.jinja import ConfinedLoader
from loopx_core.ids import shown_value

NAME = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")
"""A host id: kebab-case, starting with a letter (`acme-ide`)."""


def template_root() -> Traversable:
    """The scaffold's templates (inside the installed `loopx_templates` package)."""
    return resources.files("loopx_templates") / "scaffold"


@dataclass(frozen=True)
class Names:
    """Every name the new plugin uses, derived from the host id."""

    name: str
    title: str

    @property
    def distribution(self) -> str:
        """The pip distribution and folder name: `loopx-host-NAME`."""
        return f"loopx-host-{self.name}"

    @property
    def module(self) -> str:
        """The importable package: `loopx_host_<name>`."""
        return "loopx_host_" + self.name.replace("-", "_")

    @property
    def base(self) -> str:
        """The host's home folder as `FacadeFile.base` names it: `<name>_home`."""
        return self.name.replace("-", "_") + "_home"

    def variables(self) -> dict[str, str]:
        """The scaffold templates' variables."""
        return {
            "name": self.name,
            "title": self.title,
            "distribution": self.distribution,
            "module": self.module,
            "class_name": "".join(word.capitalize() for word in self.name.split("-")),
            "base": self.base,
            "env": self.base.upper(),
            "folder": f".{self.name}",
            "loopx_version": __version__,
        }


MAX_NAME = 64
"""Longest host name: its folder, distribution and module names stay far below any file system's limit."""


def names(name: str, title: str | None = None) -> Names:
    """Validated names for host `name` (title defaults to its words capitalised).

    The title is written as is into Python and TOML string literals and docstrings, so a quote,
    a backslash or a control character (a newline, an escape) would leave a package that does
    not parse: it is refused instead.
    """
    if not NAME.match(name) or len(name) > MAX_NAME:
        raise UsageError(
            f"invalid host name {shown_value(name)}: use kebab-case, e.g. acme-ide "
            f"(a-z, 0-9, single dashes; at most {MAX_NAME} characters)"
        )
    if title is not None and not title.strip():
        raise UsageError("--title must not be empty")
    if title is not None and (bad := next((c for c in title if _unwritable(c)), None)) is not None:
        raise UsageError(
            f"--title must not hold {_NAMED.get(bad, f'the character U+{ord(bad):04X}')}: "
            "it is written into the plugin's Python and TOML strings"
        )
    return Names(name, title.strip() if title else name.replace("-", " ").title())


_NAMED = {'"': "a double quote", "\\": "a backslash", "\n": "a line break", "\t": "a tab"}


def _unwritable(char: str) -> bool:
    return char in '"\\' or unicodedata.category(char) in ("Cc", "Cs", "Zl", "Zp")


def _environment(root: Traversable) -> jinja2.Environment:
    return jinja2.Environment(
        loader=ConfinedLoader(root),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
        variable_start_string="<<",
        variable_end_string=">>",
        block_start_string="<%",
        block_end_string="%>",
        comment_start_string="<#",
        comment_end_string="#>",
    )


def _templates(node: Traversable, prefix: str = "") -> list[str]:
    found: list[str] = []
    for child in sorted(node.iterdir(), key=lambda c: c.name):
        if child.name == "__pycache__":
            continue
        if child.is_dir():
            found += _templates(child, f"{prefix}{child.name}/")
        elif child.name.endswith(".j2"):
            found.append(f"{prefix}{child.name}")
    return found


def render(plugin: Names, root: Traversable | None = None) -> dict[str, str]:
    """The generated distribution: relative path -> text."""
    root = root or template_root()
    env = _environment(root)
    variables = plugin.variables()
    return {
        name.removesuffix(".j2").replace("__module__", plugin.module): env.get_template(name).render(
            **variables
        )
        for name in _templates(root)
    }


def next_steps(plugin: Names, folder: Path) -> list[str]:
    """The commands to run after scaffolding."""
    return [
        f"cd {folder}",
        'pip install -e ".[test]"',
        f"loopx hosts list                # shows {plugin.name}",
        "pytest --snapshot-update        # records the facade snapshots: review them",
        "pytest                          # the conformance suite and the snapshots",
        f"loopx workflow-skills --install --surface {plugin.name} --target /tmp/{plugin.name}-demo",
    ]


def scaffold(plugin: Names, directory: Path) -> tuple[Path, list[str]]:
    """Write `directory/loopx-host-NAME/`, whole or not at all; refuse a folder that exists and is not empty.

    The files are written into a hidden folder beside it, which is renamed into place once
    complete: a failure half-way (a full disk, a folder that cannot be written) leaves nothing
    behind that the next attempt would refuse as "not empty".
    """
    if (directory.exists() and not directory.is_dir()) or any(p.is_file() for p in directory.parents):
        raise UsageError("--dir must be a folder (or a path to make one)")
    folder = directory / plugin.distribution
    shown = _shown(folder)
    if folder.is_symlink() or (folder.exists() and (not folder.is_dir() or any(folder.iterdir()))):
        raise RefusedError(f"{shown} exists and is not empty: choose another --dir", code="not_empty")
    files = render(plugin)
    staging: Path | None = None
    try:
        directory.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{plugin.distribution}.", dir=directory))
        for rel, text in files.items():
            path = staging / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        staging.chmod(0o755)  # mkdtemp's 0700 would be the package folder's mode
        staging.rename(folder)  # onto nothing, or onto the empty folder that was there
    except OSError as exc:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
        if folder.exists() and any(folder.iterdir()):  # another process won the race
            raise RefusedError(
                f"{shown} exists and is not empty: choose another --dir", code="not_empty"
            ) from None
        raise RefusedError(
            f"cannot write {shown}: {exc.strerror or type(exc).__name__} (choose another --dir)",
            code="unwritable",
        ) from None
    return folder, sorted(files)


def _shown(folder: Path) -> str:
    """`folder` as a message shows it: relative to the working folder, else only its name."""
    try:
        return str(folder.absolute().relative_to(Path.cwd()))
    except (ValueError, OSError):
        return f"{folder.name} (in --dir)"
