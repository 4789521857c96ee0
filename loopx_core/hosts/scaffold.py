"""`loopx hosts scaffold NAME`: write a new host plugin distribution from Jinja templates.

The templates live in `loopx_templates/scaffold/`. Every file there is a template whose
output path drops the final `.j2` and replaces `__module__` with the plugin's module name.
They use `<< ... >>` and `<% ... %>` as delimiters, so the generated plugin's own Jinja
templates (`{{ ... }}`) and Python's `Callable[[...], ...]` pass through untouched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

import jinja2

from loopx_core import __version__
from loopx_core.errors import RefusedError, UsageError
from loopx_core.hosts.jinja import ConfinedLoader

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


def names(name: str, title: str | None = None) -> Names:
    """Validated names for host `name` (title defaults to its words capitalised)."""
    if not NAME.match(name):
        raise UsageError(
            f"invalid host name {name!r}: use kebab-case, e.g. acme-ide (a-z, 0-9, single dashes)"
        )
    if title is not None and not title.strip():
        raise UsageError("--title must not be empty")
    return Names(name, title.strip() if title else name.replace("-", " ").title())


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
    """Write `directory/loopx-host-NAME/`; refuse a folder that exists and is not empty."""
    folder = directory / plugin.distribution
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise RefusedError(f"{folder} exists and is not empty: choose another --dir", code="not_empty")
    files = render(plugin)
    for rel, text in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder, sorted(files)
