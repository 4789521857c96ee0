"""The Jinja environment for facades: root-confined, StrictUndefined, no autoescape.

A host's templates come from its own folder (`Host.templates`), then from LoopX's shared parts
under the `shared/` prefix (`loopx_templates/shared/`): a host template can `{% extends %}` or
`{% include %}` e.g. `shared/agents-skill/SKILL.md.j2` instead of copying it. Values that land in
a shell command, TOML, JSON or YAML go through a filter that quotes them for that format, so a goal id or path with spaces or quotes can neither break nor
inject into what is generated: `shell`, `toml`, `json`, `yaml`.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from functools import lru_cache
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import jinja2

from loopx_core.hosts.model import RenderContext


class ConfinedLoader(jinja2.BaseLoader):
    """Loads templates from one root; names with `..`, absolute paths or symlinks out are refused."""

    def __init__(self, root: Path | Traversable) -> None:
        self.root = root

    def get_source(
        self, environment: jinja2.Environment, template: str
    ) -> tuple[str, str | None, Callable[[], bool]]:
        """The template's source, or TemplateNotFound for anything outside the root."""
        return _source(self.root, template)


def _source(root: Path | Traversable, template: str) -> tuple[str, str | None, Callable[[], bool]]:
    """Read a template under `root`, refusing anything that would leave it."""
    parts = template.split("/")
    if template.startswith("/") or "\\" in template or any(p in ("", ".", "..") for p in parts):
        raise jinja2.TemplateNotFound(template)
    node: Path | Traversable = root
    for part in parts:
        node = node / part
    if isinstance(node, Path) and isinstance(root, Path):
        resolved = node.resolve()
        if not resolved.is_relative_to(root.resolve()):
            raise jinja2.TemplateNotFound(template)
    if not node.is_file():
        raise jinja2.TemplateNotFound(template)
    source = node.read_text(encoding="utf-8")
    return source, str(node), lambda: True


def toml_value(value: Any) -> str:
    """A TOML literal (string, number, bool, array) for `value`."""
    import tomlkit

    return tomlkit.item(value).as_string()


def yaml_value(value: Any) -> str:
    """A YAML scalar: a double-quoted string (JSON strings are valid YAML) or a number/bool."""
    return json.dumps(value, ensure_ascii=False)


def shell_quote(value: Any) -> str:
    """One shell word; a list becomes several words."""
    if isinstance(value, list | tuple):
        return shlex.join(str(v) for v in value)
    return shlex.quote(str(value))


def shared_root() -> Traversable:
    """LoopX's shared template parts (`shared/...` in every host's environment)."""
    from importlib import resources

    return resources.files("loopx_templates") / "shared"


@lru_cache(maxsize=32)
def environment(root: Path | Traversable) -> jinja2.Environment:
    """The environment for one host's template folder, with the shared parts behind it (cached)."""
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader(
            [ConfinedLoader(root), jinja2.PrefixLoader({"shared": ConfinedLoader(shared_root())})]
        ),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        shell=shell_quote,
        toml=toml_value,
        json=lambda v: json.dumps(v, ensure_ascii=False),
        yaml=yaml_value,
    )
    return env


def render(root: Path | Traversable, template: str, context: RenderContext, **extra: Any) -> str:
    """Render `template` (a name under `root`, or `shared/...`) with the context's variables."""
    return environment(root).get_template(template).render(**context.variables(), **extra)
