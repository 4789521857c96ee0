"""The PostgreSQL extra's install hint: the packages pyproject.toml's `postgres` extra names, in
the command that works for how LoopX was installed (the extra itself is not on PyPI)."""

from __future__ import annotations

import shlex
import sys
import tomllib
from pathlib import Path

import pytest

from loopx_core.store import dsn

REPO = Path(__file__).resolve().parent.parent


def test_the_hint_installs_exactly_the_extra() -> None:
    extra = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"][
        "postgres"
    ]
    assert shlex.split(dsn.POSTGRES_EXTRA) == extra


@pytest.mark.parametrize(
    ("prefix", "starts"),
    [
        ("/home/u/.local/share/pipx/venvs/loopx-kit", "pipx inject loopx-kit "),
        ("/home/u/.local/share/uv/tools/loopx-kit", "uv tool install "),
        ("/work/app/.venv", "python -m pip install "),
    ],
)
def test_the_hint_fits_the_install(monkeypatch: pytest.MonkeyPatch, prefix: str, starts: str) -> None:
    monkeypatch.setattr(sys, "prefix", prefix)
    hint = dsn.install_hint()
    assert hint.startswith(starts) and "loopx-kit[postgres]" not in hint and prefix not in hint
