"""The steps the installer takes, reported as it goes (`rendering claude-code (project scope)`).

Whoever runs the installer may listen (`listening`): the CLI does on a terminal, one line
per step on stderr, and so does `loopx doctor`, whose installation check is the installer's
own `--check`. Nobody listening (a pipe, JSON, a library caller): nothing is shown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

Listener = Callable[[str], None]

_LISTENER: ContextVar[Listener | None] = ContextVar("loopx_installer_listener", default=None)


def step(text: str) -> None:
    """Report one step (a short line, no path) to the listener, if any."""
    listener = _LISTENER.get()
    if listener is not None:
        listener(text)


@contextmanager
def listening(listener: Listener | None) -> Iterator[None]:
    """Send the steps the installer takes inside the block to `listener` (None: show nothing)."""
    token = _LISTENER.set(listener)
    try:
        yield
    finally:
        _LISTENER.reset(token)
