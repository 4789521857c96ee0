"""The selectors of a run (scope, layout, goal/agent pairs, LoopX command), reusing those recorded at install.

A host can carry several goal/agent pairs: each pair renders the whole facade, the newest pair
wins where two render the same file, and a pair stays recorded only while some file is its
own (a Codex heartbeat automation per pair). So a second pair adds its automation beside the
first, while hosts whose files are all shared (Claude's hooks) simply move to the new pair.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from loopx_core.errors import ConflictError, UsageError
from loopx_installer.manifest import Install, Pair


@dataclass
class Selection:
    """What to render: scope, layout, how hosts run LoopX, and the pairs (newest last)."""

    scope: str
    layout: str
    loopx_command: str
    pairs: list[Pair] = field(default_factory=list)
    full_uninstall: bool = False
    """Uninstall everything of the host (not one pair of several)."""
    notes: list[str] = field(default_factory=list)


MAX_COMMAND = 500
"""A LoopX command longer than this is no command a host runs."""


def check_loopx_command(loopx: str) -> str:
    """`--loopx-command` as given: one line of printable text (it lands in comments, commands
    and quoted strings of every facade, where a newline or a control character would break them)."""
    if not loopx.strip() or len(loopx) > MAX_COMMAND or any(ord(ch) < 32 or ord(ch) == 127 for ch in loopx):
        raise UsageError(
            f"--loopx-command must be one line of printable text, 1-{MAX_COMMAND} characters (a command name or path)"
        )
    return loopx


def _same(pair: Pair, goal: str | None, agent: str | None) -> bool:
    return pair.goal_id == goal and pair.agent_id == agent


def _claim(pair: Pair, project: str | None, force: bool) -> Pair:
    """The pair, now this project's: refused when another project owns it (unless `force`)."""
    if project is None or pair.project == project:
        return pair
    if pair.project is not None and not force:
        raise ConflictError(
            f"goal/agent {_label(pair)} is installed for another project (its files run there); "
            "uninstall it there first, or pass --force to move it to this project"
        )
    return Pair(pair.goal_id, pair.agent_id, pair.installed_at_ms, project)


def _label(pair: Pair) -> str:
    return f"{pair.goal_id or '-'}/{pair.agent_id or '-'}"


def resolve(
    operation: str,
    scope: str,
    layout: str | None,
    goal: str | None,
    agent: str | None,
    loopx: str | None,
    record: Install | None,
    now_ms: int,
    default_loopx: tuple[str, str | None],
    *,
    project: str | None = None,
    force: bool = False,
) -> Selection:
    """The selection for this run: given selectors win, the install's recorded ones fill the rest.

    At user scope (`project` given) every pair belongs to the project it was installed for: an
    install of a pair another project owns is a conflict (exit 5) unless `force` moves it here;
    a pair recorded before LoopX kept its project is adopted by the project re-installing it.
    """
    notes: list[str] = []
    if loopx is not None:
        check_loopx_command(loopx)
    if loopx is None and record is not None and record.loopx_command:
        loopx = record.loopx_command
        if operation != "uninstall":  # an uninstall renders nothing: it must work whatever was recorded
            check_loopx_command(loopx)
    if loopx is None:
        loopx, note = default_loopx
        if note and operation == "install":
            notes.append(note)
    selection = Selection(
        scope,
        layout or (record.layout if record is not None else None) or "default",
        loopx,
        notes=notes,
    )
    recorded = list(record.pairs) if record is not None else []
    given = goal is not None or agent is not None
    match = next((p for p in recorded if _same(p, goal, agent)), None)
    if operation == "install":
        if given:
            chosen = _claim(match, project, force) if match else Pair(goal, agent, now_ms, project)
            selection.pairs = [*(p for p in recorded if p is not match), chosen]
        else:
            selection.pairs = [_claim(p, project, True) if p.project is None else p for p in recorded]
            selection.pairs = selection.pairs or [Pair(None, None, now_ms, project)]
    elif operation == "check":
        selection.pairs = recorded or [Pair(goal, agent, now_ms)]
        if given and match is None:
            selection.pairs = [*recorded, Pair(goal, agent, now_ms)]
    else:
        if given and len(recorded) > 1 and match is None:
            raise UsageError(
                f"goal/agent {goal or '-'}/{agent or '-'} is not installed here (installed: "
                f"{', '.join(map(_label, recorded))}); give one of them, or neither to remove all"
            )
        if given and match is not None and len(recorded) > 1:
            selection.pairs = [p for p in recorded if p is not match]
        else:
            selection.pairs = recorded or [Pair(None, None, now_ms)]
            selection.full_uninstall = True
    return selection
