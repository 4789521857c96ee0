"""The runners of `loopx hook NAME` and `loopx heartbeat-prompt` (no typer here).

The host that declares the event (`Host.events`) answers it, and hosts with a heartbeat
automation build its prompt (`Host.heartbeat_prompt`); the core only dispatches. A hook never
exits 2 (hosts read 2 as "block"): every error is exit 1 with one line on stderr. The fast
entry (cli/fast.py) and the typer commands (cli/hook_cmds.py) both call these.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from loopx_core.hosts.host import Host

HOOK_ERROR_EXIT = 1
MAX_INPUT_BYTES = 8_000_000
"""Hook events are small; anything larger is refused before it is parsed."""


def run_hook(*, root: str | None, name: str, goal_id: str | None = None, agent_id: str | None = None) -> int:
    """Answer the event `name` (stdin: its JSON) as its host does; print the answer, return the exit code."""
    import os

    from loopx_core.errors import LoopxError
    from loopx_core.hosts.model import HookAnswer, HookCall
    from loopx_core.hosts.rules import plugin_call
    from loopx_core.ids import check_id, shown_value

    label = name[:80] if name.isprintable() else shown_value(name)  # never a raw newline in the line
    try:
        known = _event_hosts(name)
        if name not in known:
            raise ValueError(f"unknown hook {name[:80]!r}; known: {', '.join(known) or 'none'}")
        goal = goal_id or os.environ.get("LOOPX_GOAL_ID") or None
        agent = agent_id or os.environ.get("LOOPX_AGENT_ID") or None
        for kind, value in (("goal", goal), ("agent", agent)):
            if value is not None:
                check_id(kind, value)
        call = HookCall(
            payload=read_payload(), goal_id=goal, agent_id=agent, root=root, loopx_command=this_loopx()
        )
        with plugin_call(known[name].name, "handle_hook_event"):
            answer = known[name].handle_hook_event(name, call)
        if not isinstance(answer, HookAnswer):
            raise ValueError(
                f"the {known[name].name} host answered {type(answer).__name__}, not a HookAnswer"
            )
    except (LoopxError, ValueError) as error:
        message = error.message if isinstance(error, LoopxError) else str(error)
        sys.stderr.write(f"loopx: hook {label}: {one_line(message)[:300]}\n")
        return HOOK_ERROR_EXIT
    except OSError as error:
        sys.stderr.write(f"loopx: hook {label}: {error.strerror or 'I/O error'}\n")
        return HOOK_ERROR_EXIT
    if answer.stderr:
        sys.stderr.write(f"loopx: hook {label}: {one_line(answer.stderr)[:300]}\n")
    if answer.stdout:
        sys.stdout.write(answer.stdout if answer.stdout.endswith("\n") else answer.stdout + "\n")
    return answer.exit_code


def _event_hosts(name: str) -> dict[str, Host]:
    """The host answering `name` (a built-in event: only that plugin loads), else every event's host."""
    from loopx_core.hosts.manager import events, get_plugin_manager

    return events(get_plugin_manager(event=name))


def one_line(text: str) -> str:
    """`text` on one line, safe on a terminal: whitespace runs fold to one space and every other
    control character (an ESC, a CSI, a bell, a bidi override) is shown as its escape (`\\x1b`),
    so a host's or an error's text never splits the hook's stderr line nor drives the terminal."""
    from loopx_core.escapes import visible  # only a hook that has something to say loads it

    return visible(" ".join(text.split()), newlines=False)


def this_loopx() -> str:
    """How the agent runs the LoopX that answers this hook: `loopx` when that is on PATH (the
    same executable), else this executable's path as one shell word."""
    import os
    import shlex
    import shutil
    from pathlib import Path

    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    running = argv0 if argv0 is not None and argv0.name == "loopx" and argv0.is_file() else None
    if running is None:
        sibling = Path(sys.executable).parent / "loopx"
        running = sibling if sibling.is_file() and os.access(sibling, os.X_OK) else None
    on_path = shutil.which("loopx")
    if running is None or (on_path is not None and os.path.samefile(on_path, running)):
        return "loopx"
    return shlex.quote(str(running.absolute()))


def read_payload() -> dict[str, object]:
    """The host's event JSON from stdin: one object (empty input is `{}`); ValueError otherwise."""
    raw = b"" if sys.stdin is None or sys.stdin.isatty() else _stdin_bytes()
    if len(raw) > MAX_INPUT_BYTES:
        raise ValueError(f"the hook input is larger than {MAX_INPUT_BYTES // 1_000_000} MB")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("the hook input is not UTF-8 text") from None
    if not text.strip():
        return {}
    import json

    try:
        payload = json.loads(text)
    except (ValueError, RecursionError) as bad:
        if not hasattr(bad, "lineno"):  # not json's JSONDecodeError: too deep for its parser
            raise ValueError("the hook input is not JSON LoopX can read (nested too deeply)") from None
        raise ValueError(f"the hook input is not JSON ({bad.msg} at line {bad.lineno})") from None
    if not isinstance(payload, dict):
        raise ValueError("the hook input must be a JSON object")
    return payload


def _stdin_bytes() -> bytes:
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is not None:
        return buffer.read(MAX_INPUT_BYTES + 1)
    return sys.stdin.read(MAX_INPUT_BYTES + 1).encode("utf-8", "surrogatepass")


def run_heartbeat_prompt(
    *, root: str | None, goal_id: str, agent_id: str, surface: str | None = None, loopx_command: str = "loopx"
) -> int:
    """Print the heartbeat prompt of `surface` (else of the first host that has one); the exit code.

    Errors are reported as the typer commands' `reporting(Format.markdown)` reports them.
    """
    from loopx_core.errors import LoopxError

    try:
        _print_heartbeat_prompt(goal_id, agent_id, surface, loopx_command)
    except LoopxError as error:
        from loopx_core.cli.output import report_error

        return report_error(error, "markdown")
    except KeyboardInterrupt:
        sys.stderr.write("loopx: interrupted\n")
        return 130
    return 0


def _print_heartbeat_prompt(goal_id: str, agent_id: str, surface: str | None, loopx_command: str) -> None:
    from loopx_core.errors import NotFoundError
    from loopx_core.hosts.model import RenderContext
    from loopx_core.hosts.rules import plugin_call
    from loopx_core.ids import check_id

    check_id("goal", goal_id)
    check_id("agent", agent_id)
    for h in _heartbeat_hosts(surface):
        context = RenderContext(host=h.name, goal_id=goal_id, agent_id=agent_id, loopx_command=loopx_command)
        with plugin_call(h.name, "heartbeat_prompt"):
            prompt = h.heartbeat_prompt(context)
            if prompt is not None and not isinstance(prompt, str):
                raise TypeError(f"heartbeat_prompt() returned {type(prompt).__name__}, not text")
        if prompt:
            sys.stdout.write(prompt if prompt.endswith("\n") else prompt + "\n")
            return
    raise NotFoundError(f"no host plugin provides a heartbeat prompt{' for ' + surface if surface else ''}")


def _heartbeat_hosts(surface: str | None) -> list[Host]:
    """The host `surface` (else every host, by name)."""
    from loopx_core.hosts.manager import get_plugin_manager, host, hosts

    pm = get_plugin_manager(surface=surface)
    return [host(pm, surface)] if surface else list(hosts(pm).values())
