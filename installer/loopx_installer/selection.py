"""The selectors of a run (scope, layout, goal/agent pairs, LoopX command), reusing those recorded at install.

A host can carry several goal/agent pairs: each pair renders the whole facade, the newest pair
wins where two render the same file, and a pair stays recorded only while some file is its
own (a Codex heartbeat automation per pair). So a second pair adds its automation beside the
first, while hosts whose files are all shared (Claude's hooks) simply move to the new pair.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

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
    project: str | None = None
    """User scope: the project this run works for (each pair records its own)."""


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
    """The pair, now this project's: refused when another project that still exists owns it
    (unless `force`); a pair whose project folder is gone (moved, deleted) is taken over."""
    if project is None or pair.project == project:
        return pair
    if pair.project is not None and not force and os.path.isdir(pair.project):
        raise ConflictError(
            f"goal/agent {_label(pair)} is installed for another project ({shown_project(pair.project)}); "
            "uninstall it there first, or pass --force to move it to this project"
        )
    return Pair(pair.goal_id, pair.agent_id, pair.installed_at_ms, project)


def owned_elsewhere(selection: Selection, recorded: list[Pair], kept: list[Pair], force: bool) -> None:
    """Refuse (exit 5) a run that would drop another project's pair: an uninstall of it, or a
    host keeping one pair (Claude Code, DSH) that a new pair replaces; `force` allows it."""
    if selection.project is None or force:
        return
    staying = {(p.goal_id, p.agent_id) for p in kept}
    theirs = [
        p
        for p in recorded
        if p.project not in (None, selection.project)
        and os.path.isdir(p.project)  # a project that is gone owns nothing any more
        and (p.goal_id, p.agent_id) not in staying
    ]
    if theirs:
        named = ", ".join(f"{_label(p)} ({shown_project(p.project)})" for p in theirs)
        raise ConflictError(
            f"this would remove goal/agent {named}, installed for another project; run it there, "
            "or pass --force to remove it from here"
        )


def shown_project(project: str | None) -> str:
    """A project folder as messages name it: `~/...` under the home folder, else its name."""
    if project is None:
        return "a project LoopX did not record"
    path = Path(project)
    home = Path(os.environ.get("HOME") or Path.home())
    if path.is_relative_to(home):
        return "~/" + path.relative_to(home).as_posix()
    return f".../{path.name}"


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
    a pair recorded before LoopX kept its project is adopted only by an install naming it
    (`-g/-a`); until then its files stay as LoopX wrote them (`service`). What a run would
    remove of another project's is refused in `owned_elsewhere`.
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
        project=project,
    )
    recorded = list(record.pairs) if record is not None else []
    given = goal is not None or agent is not None
    match = next((p for p in recorded if _same(p, goal, agent)), None)
    if operation == "install":
        if given:
            chosen = _claim(match, project, force) if match else Pair(goal, agent, now_ms, project)
            selection.pairs = [*(p for p in recorded if p is not match), chosen]
        else:
            selection.pairs = recorded or [Pair(None, None, now_ms, project)]
    elif operation == "check":
        selection.pairs = recorded or [Pair(goal, agent, now_ms)]
        if given and match is None:
            selection.pairs = [*recorded, Pair(goal, agent, now_ms)]
    else:
        if given and recorded and match is None:
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
