"""`loopx hook NAME` and `loopx heartbeat-prompt`: the heartbeat entry points hosts call.

The host that declares the event (`Host.events`) answers it, and hosts with a heartbeat
automation build its prompt (`Host.heartbeat_prompt`); the core only dispatches. A hook never exits 2 (hosts read 2 as
"block"): every error is exit 1 with one line on stderr.

`run_hook` imports no typer: the lean entry (cli/entry.py) calls it straight for a command line
it fully understands, and typer's `hook` command calls it for every other. The typer commands
(`hook`, `heartbeat_prompt`) are built on first access (`__getattr__` below), so importing this
module for `run_hook` never loads typer.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from typing import Annotated, Any

    import typer

    from loopx_core.cli.common import AgentId, GoalId
    from loopx_core.hosts.host import Host

HOOK_ERROR_EXIT = 1
MAX_INPUT_BYTES = 8_000_000
"""Hook events are small; anything larger is refused before it is parsed."""
_TYPER_COMMANDS = {"hook": "hook_command", "heartbeat_prompt": "heartbeat_prompt_command"}
"""The names cli/app.py registers, and the functions behind them."""


def __getattr__(name: str) -> Any:
    """`hook` and `heartbeat_prompt`: typer's commands, with typer loaded only when the app asks."""
    if name not in _TYPER_COMMANDS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from typing import Annotated

    import typer

    from loopx_core.cli.common import AgentId, GoalId

    # typer reads the commands' annotations from this module's globals: give it what they name.
    globals().update(typer=typer, AgentId=AgentId, GoalId=GoalId, Annotated=Annotated)
    return globals()[_TYPER_COMMANDS[name]]


def hook_command(
    ctx: typer.Context,
    name: Annotated[
        str, typer.Argument(help="The host event, e.g. claude-stop (see `loopx hooks`).", show_default=False)
    ],
    goal_id: Annotated[str | None, typer.Option("--goal-id", "-g", help="Goal (else LOOPX_GOAL_ID).")] = None,
    agent_id: Annotated[
        str | None, typer.Option("--agent-id", "-a", help="Agent (else LOOPX_AGENT_ID).")
    ] = None,
) -> None:
    """Answer a host's event hook: reads the event JSON on stdin, prints the host's answer.

    Exit 0 with the answer (an empty answer lets the host carry on); 1 on any error.
    """
    raise SystemExit(run_hook(name, goal_id, agent_id, (ctx.find_root().obj or {}).get("root")))


def run_hook(name: str, goal_id: str | None, agent_id: str | None, root: str | None) -> int:
    """Answer the event `name` (stdin: its JSON) as its host does; print the answer, return the exit code."""
    import os

    from loopx_core.errors import LoopxError
    from loopx_core.hosts.builtin import event_host
    from loopx_core.hosts.model import HookAnswer, HookCall
    from loopx_core.hosts.rules import plugin_call
    from loopx_core.ids import check_id, shown_value

    label = name[:80] if name.isprintable() else shown_value(name)  # never a raw newline in the line
    try:
        builtin = event_host(name)  # a built-in host's event without pluggy, when that is sure
        known = {name: builtin} if builtin is not None else _registered_events()
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


def _registered_events() -> dict[str, Host]:
    """Every hook event and its host, from pluggy's registry (every plugin loaded)."""
    from loopx_core.hosts.manager import events, get_plugin_manager

    return events(get_plugin_manager())


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

    from loopx_core.store import paths  # pathlib's answers without pathlib (every hook runs this)

    argv0 = paths.pure(sys.argv[0]) if sys.argv and sys.argv[0] else None
    running = (
        argv0 if argv0 is not None and paths.name_of(argv0) == "loopx" and paths.is_file(argv0) else None
    )
    if running is None:
        sibling = paths.pure(os.path.join(paths.parent_of(sys.executable), "loopx"))
        running = sibling if paths.is_file(sibling) and os.access(sibling, os.X_OK) else None
    on_path = which("loopx")
    if running is None or (on_path is not None and os.path.samefile(on_path, running)):
        return "loopx"
    from loopx_core.commands import quote  # shlex.quote, without shlex

    absolute = running if running.startswith("/") else paths.pure(f"{os.getcwd()}/{running}")  # Path.absolute
    return quote(absolute)


def which(name: str) -> str | None:
    """`shutil.which(name)` for a plain command name, without importing shutil (which loads the
    bz2 and lzma modules) on POSIX; tests/test_claude_hooks.py compares both on generated PATHs."""
    import os

    if sys.platform == "win32":  # PATHEXT and the current folder: shutil's own rules
        import shutil

        return shutil.which(name)
    path = os.environ.get("PATH")
    if path is None:
        try:
            path = os.confstr("CS_PATH")
        except (AttributeError, ValueError):
            path = os.defpath
    if not path:
        return None
    seen: set[str] = set()
    for folder in os.fsdecode(path).split(os.pathsep):
        if folder in seen:
            continue
        seen.add(folder)
        candidate = os.path.join(folder, name)
        if (
            os.path.exists(candidate)
            and os.access(candidate, os.F_OK | os.X_OK)
            and not os.path.isdir(candidate)
        ):
            return candidate
    return None


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
    from loopx_core.jsontext import loads  # only a hook reads JSON (heartbeat-prompt imports this module too)

    try:
        payload = loads(text)
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


def heartbeat_prompt_command(
    goal_id: GoalId,
    agent_id: AgentId,
    surface: Annotated[
        str | None,
        typer.Option("--surface", help="Host whose heartbeat it is (default: the one that has one)."),
    ] = None,
    loopx_command: Annotated[str, typer.Option("--loopx-command", help="How the host runs LoopX.")] = "loopx",
) -> None:
    """Print the prompt a host's heartbeat automation runs on every tick."""
    raise SystemExit(run_heartbeat_prompt(goal_id, agent_id, surface, loopx_command))


def run_heartbeat_prompt(goal_id: str, agent_id: str, surface: str | None, loopx_command: str) -> int:
    """Print the heartbeat prompt of `surface` (else of the first host that has one); the exit code.

    Imports no typer (the lean entry calls it straight); errors are reported as the typer
    commands' `reporting(Format.markdown)` reports them, and cli/output.py loads only then.
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
    """The host `surface` (else every host, by name): built-in ones without pluggy when that is sure."""
    from loopx_core.hosts.builtin import every_host, named_host

    if surface:
        found = named_host(surface)
        if found is not None:
            return [found]
    else:
        every = every_host()
        if every is not None:
            return list(every.values())
    from loopx_core.hosts.manager import get_plugin_manager, host, hosts

    pm = get_plugin_manager()
    return [host(pm, surface)] if surface else list(hosts(pm).values())
