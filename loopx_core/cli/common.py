"""Shared option types and helpers for the typer commands."""

from __future__ import annotations

from typing import Annotated

import typer

from loopx_core.cli.output import Format
from loopx_core.store.base import Store
from loopx_core.store.choice import open_store
from loopx_core.store.files import find_root

GoalId = Annotated[str, typer.Option("--goal-id", "-g", help="Goal id (a-z 0-9 . _ -).", show_default=False)]
AgentId = Annotated[
    str, typer.Option("--agent-id", "-a", help="Agent id (a-z 0-9 . _ -).", show_default=False)
]
TodoId = Annotated[str, typer.Option("--todo-id", "-t", help="Todo id, e.g. t1.", show_default=False)]
JsonFormat = Annotated[Format, typer.Option("--format", "-f", help="Output format.")]
MarkdownFormat = Annotated[Format, typer.Option("--format", "-f", help="Output format.")]


def store(ctx: typer.Context) -> Store:
    """The project's store (files, or the PostgreSQL store it records or `LOOPX_STORE` names).

    The project is the root chosen by `--root` / `LOOPX_ROOT` / the nearest `.loopx/`.
    """
    root = (ctx.find_root().obj or {}).get("root")
    return open_store(find_root(root))


def dump(model: object) -> object:
    """A pydantic model (or list of them) as JSON data."""
    if isinstance(model, list):
        return [dump(m) for m in model]
    return model.model_dump(mode="json", exclude_none=True)  # type: ignore[attr-defined]
