"""Shared option types and helpers for the typer commands."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Annotated, Any

import typer

from loopx_core.cli.declare import AGENT, FORMAT, GOAL, Opt
from loopx_core.cli.formats import Format
from loopx_core.errors import UsageError
from loopx_core.store.base import Store
from loopx_core.store.choice import open_store
from loopx_core.store.roots import find_root


def option(opt: Opt, **extra: Any) -> Any:
    """The typer option of a declaration (`cli.declare`): its spellings and help."""
    return typer.Option(*opt.names, help=opt.help, **extra)


GoalId = Annotated[str, option(GOAL, show_default=False)]
AgentId = Annotated[str, option(AGENT, show_default=False)]
TodoId = Annotated[str, typer.Option("--todo-id", "-t", help="Todo id, e.g. t1.", show_default=False)]
FormatOption = Annotated[Format, option(FORMAT)]
SCOPES = ("project", "user")


def store(ctx: typer.Context) -> Store:
    """The project's store (files, or the PostgreSQL store it records or `LOOPX_STORE` names).

    The project is the root chosen by `--root` / `LOOPX_ROOT` / the nearest `.loopx/`.
    """
    root = (ctx.find_root().obj or {}).get("root")
    return open_store(find_root(root))


def dump(model: object) -> object:
    """A record (or list of them) as JSON data."""
    if isinstance(model, list):
        return [dump(m) for m in model]
    return model.dump(exclude_none=True)  # type: ignore[attr-defined]


def suggestion(value: str, choices: Sequence[str]) -> str:
    """` (did you mean X?)` for the choice closest to `value`, else ""."""
    close = difflib.get_close_matches(value, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def check_choice(option: str, value: str, choices: Sequence[str], *, see: str = "") -> str:
    """`value` if it is one of `choices`, else a usage error naming them and the closest one."""
    if value in choices:
        return value
    shown = value[:60] if value.isprintable() else repr(value[:60])
    known = ", ".join(choices) or "none"
    raise UsageError(
        f"unknown {option} {shown!r}{suggestion(value, choices)}; known: {known}"
        + (f" ({see})" if see else "")
    )


def check_surface(surface: str | None) -> str | None:
    """A `--surface` a loaded host plugin declares (None stays None), suggesting the closest."""
    if surface is None:
        return None
    from loopx_core.hosts.manager import get_plugin_manager, registry

    return check_choice(
        "--surface", surface, sorted(registry(get_plugin_manager())), see="see `loopx hosts list`"
    )


def check_scope(scope: str | None) -> str | None:
    """`--scope` is project or user (None: the command's default)."""
    return None if scope is None else check_choice("--scope", scope, SCOPES)
