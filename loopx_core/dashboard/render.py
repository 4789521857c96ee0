"""The dashboard's own Jinja environment: every value autoescaped, every name required.

Separate from `loopx_core.hosts.jinja` (the facade renderer writes files for hosts, this one
writes HTML for a browser): here every template is HTML and every substitution is escaped,
so a todo titled `<script>...</script>` is shown as text, and its control characters as escapes.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import escape

from loopx_core.escapes import visible

PHASE_NAMES = (
    "host_execute",
    "typed_result",
    "validation",
    "durable_writeback",
    "quota_spend",
    "terminal_closeout",
)


def _shown(value: Any) -> Any:
    """Every `{{ ... }}` of a page: stored text with its control characters and bidi overrides as
    escapes (`escapes.visible`), so no title reorders a line or reaches a terminal (`curl`) raw.
    Markup (`tojson`, `|data`) is left as it is."""
    return visible(value) if type(value) is str else value


@cache
def environment() -> Environment:
    """The environment (templates from the package, so a wheel install finds them)."""
    env = Environment(
        loader=PackageLoader("loopx_core.dashboard", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_shown,
    )
    env.globals["PHASES"] = PHASE_NAMES
    env.filters["short"] = lambda key: str(key).removeprefix("sha256:")[:12]
    env.filters["data"] = escape  # a form's value: the text as stored, so a submit writes it back unchanged
    env.filters["hm"] = lambda at: str(at)[:16].replace("T", " ") if at else "-"
    return env


def render(name: str, **context: Any) -> str:
    """Render one page template."""
    return environment().get_template(name).render(**context)
